"""Chunk edges: a batch whose lengths are 64 m + 1 (m = 4 .. 46), so that for any chunk of whole 64-key
tiles from 256 keys up, some sequence's last chunk holds one key, which the first new queries of a
several-query call do not see (their bottom-right limit is below it). Every decode step given, into a
NaN-poisoned output, against the fp32 reference; prints and returns one row a (step, q_len).

    PYTHONPATH=. python edge.py step[,step] > edge.txt
"""

import sys

import torch

from lab import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import reference

lens = [64 * m + 1 for m in range(4, 47)]
rows = []
for name in sys.argv[1].split(","):
    fn = variants.load(name)
    for q_len in (1, 4, 8):
        shape = DecodeShape(B=len(lens), H=8, H_kv=2, D=128, cache_len=3000, q_len=q_len)
        x = shape.random_inputs(device="cuda", generator=torch.Generator().manual_seed(q_len))
        cache_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
        ref = reference(x["q"], x["k_cache"], x["v_cache"], cache_lens)
        out = torch.full_like(x["q"], float("nan"))
        fn(x["q"], x["k_cache"], x["v_cache"], cache_lens, None, out=out)
        torch.cuda.synchronize()
        bad = ~torch.isfinite(out)
        err = (out.float() - ref).abs().max().item()
        bad_seqs = sorted(set(torch.nonzero(bad)[:, 0].tolist()))
        print(f"{name} q_len={q_len}: max_abs_err {err:.3g}, non-finite {int(bad.sum())} elements, "
              f"in sequences (length) {[lens[b] for b in bad_seqs][:10]}", flush=True)
