"""Applied on the device copy only, never committed to kernels/: diagnostic switches in the decode branch's TMA
kernel (kernels/include/fa/decode_tma_kernel.cuh) and its launcher, all off unless defined, so every committed build
is unchanged.

- FA_DIAG_SKIP_MATH: the consumers wait for each K/V tile and release it without computing on it (Q K^T, the
  online softmax and P V skipped): what is left is the kernel's data movement, its barriers and its epilogue.
- FA_DIAG_SKIP_EPILOGUE: the consumers return after their last tile, with no merge of the warps' results through
  shared memory and no write of O.
- FA_DIAG_SKIP_MERGE (added for ../2026-12-07-decode-mixed-phases-h200): a split call launches no merge kernel
  (kernels/include/fa/decode_launch.cuh's merge returns at once), so the call is its split kernel alone.

The outputs of either are wrong by design: exposure.py times them and checks none.

    python data/explorations/2026-12-06-decode-phase-exposure/diag_patch.py      (from the repository root)
"""
from pathlib import Path

HEADER = Path("kernels/include/fa/decode_tma_kernel.cuh")
LAUNCHER = Path("kernels/include/fa/decode_launch.cuh")
# The consumers' math on a tile: inside the kernel's loop at this folder's call (4 spaces), in decode_consume_tile
# since 2026-12-06 (2 spaces); either indentation is matched.
CALL = "fa::decode_warp_keys<T, Layout>(o, rows, sq, sk + off, sv + off, key0, limit, scale_log2, lane);"
WARP_KEYS = next((line for line in HEADER.read_text().splitlines() if line.strip() == CALL), CALL)
EDITS = [
    (HEADER, f"{WARP_KEYS}\n", f"#ifndef FA_DIAG_SKIP_MATH\n{WARP_KEYS}\n#endif\n"),
    (HEADER, "  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile\n",
     "  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile\n"
     "#ifdef FA_DIAG_SKIP_EPILOGUE\n  return;\n#endif\n"),
    (LAUNCHER, "  static int merge(const fa::DecodeArgs& a, const fa::SplitPartials& p, cudaStream_t stream) {\n",
     "  static int merge(const fa::DecodeArgs& a, const fa::SplitPartials& p, cudaStream_t stream) {\n"
     "#ifdef FA_DIAG_SKIP_MERGE\n    return 0;\n#endif\n"),
]

for path, old, new in EDITS:
    text = path.read_text()
    if text.count(old) != 1:
        raise SystemExit(f"diag_patch: expected one match of {old.strip()!r} in {path}, found {text.count(old)}")
    path.write_text(text.replace(old, new))
print(f"diag_patch: {len(EDITS)} switches added to {', '.join(sorted({str(p) for p, _, _ in EDITS}))}")
