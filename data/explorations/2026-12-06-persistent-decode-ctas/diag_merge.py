"""Applied on the device copy only, after step72.patch, never committed to kernels/: diagnostic switches that take the
merge of the warps' results and the write of O out of step 70 and step 72, so that their difference without them says
whether step 72's extra time a work is in its merge and write (fixed places against run-time, swizzled ones) or before
(the work decode, the loop). Off unless defined, so every build without them is unchanged; the outputs with them are
wrong by design, and merge_cost.py checks none of them.

- FA_DIAG_SKIP_EPILOGUE (step 70, as ../2026-12-06-decode-phase-exposure/diag_patch.py): the consumers return after
  their last tile.
- FA_DIAG_SKIP_MERGE (step 72): the consumers skip the merge's stores and the write, and still wait on the merge slots
  and release them, so that the ring runs on as without the switch.

    python data/explorations/2026-12-06-persistent-decode-ctas/diag_merge.py      (from the repository root)
"""
from pathlib import Path

EDITS = {
    Path("kernels/include/fa/decode_tma_kernel.cuh"): [
        ("  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile\n",
         "  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile\n"
         "#ifdef FA_DIAG_SKIP_EPILOGUE\n  return;\n#endif\n")],
    Path("kernels/include/fa/decode_persistent.cuh"): [
        ("    merge.put(o, rows, warp, lane);\n",
         "#ifndef FA_DIAG_SKIP_MERGE\n    merge.put(o, rows, warp, lane);\n"),
        ("    fa::wgmma::fence_proxy_async();  // this thread's merge writes",
         "#endif\n    fa::wgmma::fence_proxy_async();  // this thread's merge writes")],
}
for header, edits in EDITS.items():
    text = header.read_text()
    for old, new in edits:
        if text.count(old) != 1:
            raise SystemExit(f"diag_merge: expected one match of {old.strip()!r} in {header}, found {text.count(old)}")
        text = text.replace(old, new)
    header.write_text(text)
    print(f"diag_merge: {len(edits)} edits in {header}")
