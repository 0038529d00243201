"""Quick loop (exploration, not the study): hot-mode medians of some variants next to SDPA's cuDNN
and flash backends at a few shapes, sampled with the study's own randomized interleave and stop
rule (lab.timing.interleave), with the SM clock. Prints a table; writes JSON to $OUT/bench.json.
usage: PYTHONPATH=. python data/explorations/2026-11-23-h100-persistent/explore_bench.py v1,v2 "B,H,S,D[,c];..."   (CAP=seconds per impl)"""
import json, os, statistics, sys
import torch
from lab import variants, timing, stats
from lab.records import Clocks
from lab.peers import SdpaPeer

names = sys.argv[1].split(",")
shapes = sys.argv[2].split(";")
rule = timing.StopRule(rel_ci=0.003, cap_s=float(os.environ.get("CAP", "1.5")), min_samples=40)
clocks = Clocks()
kernels = {n: variants.load(n) for n in names}
peers = {p.name: p for p in (SdpaPeer("cudnn"), SdpaPeer("flash"))}
out = []
for i, spec in enumerate(shapes):
    parts = spec.split(",")
    B, H, S, D = map(int, parts[:4]); causal = len(parts) > 4 and parts[4] == "c"
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    timers = {n: timing.HotTimer(lambda attn=attn: attn.launch(q, k, v, o, causal)) for n, attn in kernels.items()}
    for name, p in peers.items():
        with p.context():
            timers[name] = timing.HotTimer(p.bind(q, k, v, causal, None))
    state = timing.interleave(timers, rule, clocks=clocks, seed=i,
                              context_of=lambda n: peers[n].context() if n in peers else __import__("contextlib").nullcontext())
    med = {n: statistics.median(st["samples"]) for n, st in state.items()}
    clk = {n: statistics.median([c for c in st["clock_mhz"] if c is not None] or [0]) for n, st in state.items()}
    best = min(med["sdpa_cudnn"], med["sdpa_flash"])
    out.append({"shape": [B, H, S, D], "causal": causal, "median_us": med, "clock_mhz": clk,
                "samples": {n: st["samples"] for n, st in state.items()}})
    print(f"({B},{H},{S},{D}){' causal' if causal else ''}: " + "  ".join(
        f"{n}={m:.1f}us({stats.tflops(B, H, S, D, causal, m):.0f}TF,{best / m:.3f}x,{clk[n]:.0f}MHz)"
        for n, m in med.items()), flush=True)
if os.environ.get("OUT"):
    json.dump(out, open(os.path.join(os.environ["OUT"], "bench.json"), "w"))
print("\nSUMMARY (fastest of sdpa_cudnn/sdpa_flash over impl, hot median; > 1 = impl faster)")
print(f"{'shape':<24}" + "".join(f"{n[:13]:>14}" for n in names) + f"{'cudnn us':>10}{'flash us':>10}")
for row in out:
    med = row["median_us"]; best = min(med["sdpa_cudnn"], med["sdpa_flash"])
    B, H, S, D = row["shape"]
    label = f"({B},{H},{S},{D}){'c' if row['causal'] else ''}"
    print(f"{label:<24}" + "".join(f"{best / med[n]:>14.3f}" for n in names)
          + f"{med['sdpa_cudnn']:>10.1f}{med['sdpa_flash']:>10.1f}")
