"""Exploration: step 36 with its barrier waits asleep (FA_EXP_SLEEP 1: the producer's, 2: every wait) against
step 36 as committed, FA3 and cuDNN. Builds the configurations, runs the correctness grid on each (lab.measure.
check's cases: fp32 reference, poisoned outputs, every element), then times them hot in a randomized round
robin, one sample each a round (lab.measure.timing.HotTimer), and prints per-shape medians and the paired
per-round ratios against step 36 with a 95 % interval (t over the rounds' log ratios).

    python exp_sleep.py check|time [seconds_per_shape]
"""
import dataclasses, json, math, os, random, sys, time
import numpy as np
import torch
from scipy import stats
from lab.kernels import build
from lab.kernels.manifest import get
from lab.kernels.shape import Shape
from lab.measure import check, peers
from lab.measure.timing import HotTimer

# EXP_CONFIGS / EXP_SHAPES (JSON) override these (call_rescale/call_rescale.sh)
CONFIGS = json.loads(os.environ.get("EXP_CONFIGS", "null")) or {"s36": {}, "sleep_p": {"FA_EXP_SLEEP": 1},
                                                                 "sleep_all": {"FA_EXP_SLEEP": 2}}
SHAPES = json.loads(os.environ["EXP_SHAPES"]) if os.environ.get("EXP_SHAPES") else ["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "1,16,16384,128,causal", "4,16,4096,128,causal",
          "16,16,1024,128", "4,16,4096,64", "4,16,4096,64,causal", "8,16,512,64", "1,32,8192,128,causal,kv8,bf16"]

def built():
    from concurrent.futures import ThreadPoolExecutor

    def one(item):
        label, defines = item
        impl = "uniform_descriptors" + "".join(f"_{k}{v}" for k, v in defines.items()) if defines else None
        return label, build.build_variant(dataclasses.replace(get("uniform_descriptors"), twin=None),
                                          defines=defines, impl=impl)
    out = {}
    with ThreadPoolExecutor(3) as pool:
        for label, r in pool.map(one, CONFIGS.items()):
            if not r.ok:
                print(label, "BUILD FAILED", r.log[-3000:]); sys.exit(1)
            print(f"built {label}: {len(r.ptxas)} kernels, registers {sorted({p['registers'] for p in r.ptxas})}, "
                  f"spill stores {sum(p['spill_stores'] for p in r.ptxas)} B", flush=True)
            out[label] = r.load()
    return out

def do_ncu(kernels, label, spec):
    """One launch of `label` inside the NVTX range ncu profiles (lab.measure.profile's rule)."""
    s = Shape.parse(spec)
    q, k, v = s.random_inputs()
    out = torch.empty_like(q)
    attn = kernels[label]
    for _ in range(2):
        attn.launch(q, k, v, out, s.causal, None)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("profile")
    attn.launch(q, k, v, out, s.causal, None)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()

def do_check(kernels):
    cases = check.grid() + check.long_cases() + check.model_cases() + check.many_tile_cases()
    refs = check.ReferenceCache()
    res = {label: [] for label in kernels}
    for c in cases:  # each case's reference once, for every configuration
        for label, attn in kernels.items():
            res[label].append(check.check_case(label, attn, c, refs))
    for label, rs in res.items():
        taken = [r for r in rs if not r.unsupported]
        bad = [r for r in taken if not r.passed]
        print(f"check {label}: {len(taken)} cases run, {len(taken) - len(bad)} passed, {len(bad)} failed; "
              f"worst err/tol {max(r.max_abs_err / r.tolerance for r in taken):.3f}", flush=True)
        for r in bad[:5]:
            print("   FAILED", r.case, r.max_abs_err, r.tolerance, r.finite, r.deterministic)

def do_time(kernels, seconds):
    fa3, cudnn = peers.get("flash_attn3"), peers.get("sdpa_cudnn")
    rows = []
    for spec in SHAPES:
        s = Shape.parse(spec)
        q, k, v = s.random_inputs()
        out = torch.empty_like(q)
        timers = {}
        for label, attn in kernels.items():
            timers[label] = HotTimer(lambda attn=attn: attn.launch(q, k, v, out, s.causal, None))
        for name, peer in (("fa3", fa3), ("cudnn", cudnn)):
            with peer.context():
                timers[name] = HotTimer(peer.bind(q, k, v, s.causal, None))
        samples = {l: [] for l in timers}
        order = list(timers)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            random.shuffle(order)
            for l in order:
                samples[l].extend(timers[l].samples(1))
        med = {l: float(np.median(x)) for l, x in samples.items()}
        line = f"{spec:32s} " + " ".join(f"{l}={med[l]:8.1f}" for l in timers)
        for l in timers:
            if l == "s36":
                continue
            r = np.log(np.array(samples["s36"]) / np.array(samples[l]))  # > 0: l faster than s36
            m, se = r.mean(), r.std(ddof=1) / math.sqrt(len(r))
            t = stats.t.ppf(0.975, len(r) - 1)
            line += f" | s36/{l} {math.exp(m):.4f} [{math.exp(m - t * se):.4f}, {math.exp(m + t * se):.4f}]"
        print(line + f" (n={len(samples['s36'])})", flush=True)
        rows.append({"shape": spec, "samples": samples})
        del timers
        torch.cuda.empty_cache()
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], f"time_{os.getpid()}.json"), "w") as fh:
            json.dump(rows, fh)

if __name__ == "__main__":
    kernels = built()
    if sys.argv[1] == "check":
        do_check(kernels)
    elif sys.argv[1] == "ncu":
        do_ncu(kernels, sys.argv[2], sys.argv[3])
    else:
        do_time(kernels, float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
