"""FlashAttention-3 through lab.measure.fa3 beside cuDNN at the long shapes: each one's hot median from
the study's harness (HotTimer: a CUDA graph of back-to-back launches, 10 samples a round, 5 rounds) and
Nsight Compute's gpu__time_duration of single launches (lab.measure.profile.profile_impl, three
processes, median), and the two's ratio. Target (issue 45): within 2 % wherever a launch takes 100 us
or more. Also the step 35 ratio to both, hot, on the same inputs.

    PYTHONPATH=. python data/explorations/2026-11-27-fa3-peer/xval.py OUT_DIR
"""
import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

from lab.kernels import variants
from lab.kernels.shape import Shape
from lab.measure import peers, profile, timing

SHAPES = ["4,16,4096,64", "4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "4,16,4096,64,causal",
          "4,16,4096,128,causal", "1,16,16384,128,causal", "1,64,8192,128,causal,kv8,bf16", "4,16,512,64"]
out_dir = Path(sys.argv[1])
fa3, cudnn = peers.get("flash_attn3"), peers.get("sdpa_cudnn")
step = variants.load("longest_first_queue")
rows = []
for spec in SHAPES:
    shape = Shape.parse(spec)
    q, k, v = shape.random_inputs()
    launches = {"flash_attn3": fa3.bind(q, k, v, shape.causal, None), "sdpa_cudnn": cudnn.bind(q, k, v, shape.causal, None)}
    o = torch.empty_like(q)
    launches["longest_first_queue"] = lambda: step(q, k, v, is_causal=shape.causal, out=o)
    timers = {}
    with cudnn.context():
        for name, launch in launches.items():
            timers[name] = timing.HotTimer(launch)
        hot = {name: [] for name in launches}
        for _ in range(5):  # round robin: a drift falls on all three alike
            for name, timer in timers.items():
                hot[name] += timer.samples(10)
    med = {name: statistics.median(x) for name, x in hot.items()}
    ncu = {}
    for name in ("flash_attn3", "sdpa_cudnn"):
        durations = []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as tmp:
                res = profile.profile_impl(name, shape, shape.causal, Path(tmp))
            if res.ok and res.main:
                durations.append(res.main.get("duration"))  # gpu__time_duration of the main kernel, us
            else:
                durations.append(None)
                ncu[name + "_error"] = res.reason
        good = [d for d in durations if d is not None]
        ncu[name] = statistics.median(good) if good else None
        ncu[name + "_all"] = durations
    row = {"shape": spec, "hot_us": med, "ncu_us": ncu,
           "fa3_hot_over_ncu": med["flash_attn3"] / ncu["flash_attn3"] if ncu.get("flash_attn3") else None,
           "cudnn_hot_over_ncu": med["sdpa_cudnn"] / ncu["sdpa_cudnn"] if ncu.get("sdpa_cudnn") else None,
           "step35_over_fa3_speed": med["flash_attn3"] / med["longest_first_queue"],
           "step35_over_cudnn_speed": med["sdpa_cudnn"] / med["longest_first_queue"]}
    rows.append(row)
    print(f"{spec:34} hot us: FA3 {med['flash_attn3']:8.1f} cuDNN {med['sdpa_cudnn']:8.1f} step35 "
          f"{med['longest_first_queue']:8.1f} | ncu FA3 {ncu['flash_attn3'] or float('nan'):8.1f} "
          f"(hot/ncu {row['fa3_hot_over_ncu'] or float('nan'):.3f}) cuDNN {ncu['sdpa_cudnn'] or float('nan'):8.1f} "
          f"(hot/ncu {row['cudnn_hot_over_ncu'] or float('nan'):.3f}) | step35/FA3 {row['step35_over_fa3_speed']:.3f} "
          f"step35/cuDNN {row['step35_over_cudnn_speed']:.3f}", flush=True)
(out_dir / "xval.json").write_text(json.dumps(rows, indent=1, default=str))
