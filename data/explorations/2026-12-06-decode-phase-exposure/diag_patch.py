"""Applied on the device copy only, never committed to kernels/: two diagnostic switches in the decode branch's TMA
kernel (kernels/include/fa/decode_tma_kernel.cuh), both off unless defined, so every committed build is unchanged.

- FA_DIAG_SKIP_MATH: the consumers wait for each K/V tile and release it without computing on it (Q K^T, the
  online softmax and P V skipped): what is left is the kernel's data movement, its barriers and its epilogue.
- FA_DIAG_SKIP_EPILOGUE: the consumers return after their last tile, with no merge of the warps' results through
  shared memory and no write of O.

The outputs of either are wrong by design: exposure.py times them and checks none.

    python data/explorations/2026-12-06-decode-phase-exposure/diag_patch.py      (from the repository root)
"""
from pathlib import Path

HEADER = Path("kernels/include/fa/decode_tma_kernel.cuh")
EDITS = [
    ("    fa::decode_warp_keys<T, Layout>(o, rows, sq, sk + off, sv + off, key0, limit, scale_log2, lane);\n",
     "#ifndef FA_DIAG_SKIP_MATH\n"
     "    fa::decode_warp_keys<T, Layout>(o, rows, sq, sk + off, sv + off, key0, limit, scale_log2, lane);\n"
     "#endif\n"),
    ("  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile\n",
     "  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile\n"
     "#ifdef FA_DIAG_SKIP_EPILOGUE\n  return;\n#endif\n"),
]

text = HEADER.read_text()
for old, new in EDITS:
    if text.count(old) != 1:
        raise SystemExit(f"diag_patch: expected one match of {old.strip()!r} in {HEADER}, found {text.count(old)}")
    text = text.replace(old, new)
HEADER.write_text(text)
print(f"diag_patch: {len(EDITS)} switches added to {HEADER}")
