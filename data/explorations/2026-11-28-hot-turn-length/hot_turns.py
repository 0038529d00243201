"""How long may a hot turn be before the burst leaves the boost clock? FA3 and cuDNN at three long shapes,
hot, interleaved under StopRules differing only in hot_turn_us (0: the rule's blocks of 3 then 9; 10000,
4000, 1000 us), three rounds of each rule one after another; then Nsight Compute's lone launches of FA3
(lab.measure.ncu_xval, as the profile stage runs them) on the same GPU.

    PYTHONPATH=. python data/explorations/2026-11-28-hot-turn-length/hot_turns.py OUT_DIR
"""
import json
import statistics
import sys
from pathlib import Path

import torch

from lab.kernels.shape import Shape
from lab.measure import clocks as clocks_mod, ncu_xval, peers, timing
from lab.studies.measure_shape import input_sets

SHAPES = [Shape(1, 16, 16384, 128, False), Shape(2, 16, 8192, 128, False), Shape(1, 16, 16384, 64, False)]
IMPLS = ["flash_attn3", "sdpa_cudnn"]
BUDGETS = [0.0, 10000.0, 4000.0, 1000.0]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    clocks = clocks_mod.Clocks()
    rows = []
    for shape in SHAPES:
        sets = [shape.random_inputs() for _ in range(input_sets(shape, timing.l2_bytes()))]
        ps = {n: peers.get(n) for n in IMPLS}
        timers = {}
        for n, p in ps.items():
            with p.context():
                timers[n] = timing.HotTimer([p.bind(q, k, v, shape.causal, None) for q, k, v in sets])
        for rnd in range(3):
            for budget in BUDGETS:
                rule = timing.StopRule(rel_ci=0.005, cap_s=1.0, min_samples=17, block=3, block_after_minimum=9,
                                       hot_turn_us=budget or None)
                st = timing.interleave(timers, rule, clocks=clocks, seed=rnd, context_of=lambda n: ps[n].context())
                for n, s in st.items():
                    rows.append({"shape": shape.spec, "impl": n, "round": rnd, "hot_turn_us": budget,
                                 "median_us": statistics.median(s["samples"]), "n": len(s["samples"]),
                                 "turns": len(set(s["round"])),
                                 "clock_median": statistics.median(c for c in s["clock_mhz"] if c),
                                 "clock_min": min(c for c in s["clock_mhz"] if c)})
                    print(f"{shape.spec:18} {n:12} round {rnd} hot_turn_us {budget:6.0f}: median "
                          f"{rows[-1]['median_us']:8.1f} us, n {rows[-1]['n']:3}, turns {rows[-1]['turns']:3}, "
                          f"clock {rows[-1]['clock_median']:.0f} (min {rows[-1]['clock_min']:.0f})", flush=True)
        del sets, timers
        torch.cuda.empty_cache()
    x = ncu_xval.crosscheck("flash_attn3", {s: input_sets(s, timing.l2_bytes()) for s in SHAPES}, out / "ncu")
    for r in x["rows"]:
        print(f"ncu {r['shape']:18} {r['mode']}: {r['per_launch_us']:.1f} us [{r['low_us']:.1f}, {r['high_us']:.1f}]")
    print("errors", x["errors"])
    (out / "hot_turns.json").write_text(json.dumps({"rows": rows, "ncu": x}, indent=1))
    print(f"{'shape':18} {'impl':12} " + " ".join(f"{b:>8.0f}" for b in BUDGETS) + "   ncu")
    for shape in SHAPES:
        nc = {r["shape"]: r["per_launch_us"] for r in x["rows"]}
        for n in IMPLS:
            med = [statistics.median(r["median_us"] for r in rows if r["shape"] == shape.spec and r["impl"] == n
                                     and r["hot_turn_us"] == b) for b in BUDGETS]
            print(f"{shape.spec:18} {n:12} " + " ".join(f"{m:8.1f}" for m in med)
                  + (f"   {nc.get(shape.spec, float('nan')):.1f}" if n == "flash_attn3" else ""))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
