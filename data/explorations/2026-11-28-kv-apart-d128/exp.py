"""Exploration (issue 46): step 36 beside the draft of step 48 (K and V released apart at D = 128, the unmasked
tiles in a loop of their own) in several key tiles, FA3 and cuDNN. Builds the configurations, runs the
correctness grid on each (lab.measure.check's cases: fp32 reference, poisoned outputs, every element), then
times them hot in a randomized round robin, one sample each a round (lab.measure.timing.HotTimer), and
prints per-shape medians and the paired per-round ratios against the first configuration with a 95 % interval (t over the
rounds' log ratios). Adapted from ../2026-11-28-stall-sampling-sleeping-waits/call_sleep/exp_sleep.py.

    python exp.py check|time [seconds_per_shape]
    python exp.py summary time.txt   # the first configuration over each other one, a line a shape
"""
import json, math, os, random, sys, time
import numpy as np
import torch
from scipy import stats
from lab.kernels import build
from lab.kernels.manifest import get
from lab.kernels.shape import Shape
from lab.measure import check, peers
from lab.measure.timing import HotTimer

R240 = {"FA_EXP_P24": 1, "FA_EXP_CMAX": 240}  # 24 producer registers, 240 a consumer (FlashAttention-3's split)
CONFIGS = {  # label: (variant, defines); call 1 ran these with the draft of step 49 as 48_kv_apart_d128.cu
    "s36": ("uniform_descriptors", {}),
    "a128x3": ("kv_apart_d128", {**R240, "FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 3}),
    "a128x3_mix": ("kv_apart_d128", {**R240, "FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 3, "FA_EXP_MASK_SPLIT": 0}),
    "a128x2": ("kv_apart_d128", {**R240, "FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 2}),
    "a160x2": ("kv_apart_d128", {**R240, "FA_TILE_BC_D128": 160, "FA_TILE_STAGES_D128": 2}),
    "a176x2": ("kv_apart_d128", {**R240, "FA_TILE_BC_D128": 176, "FA_TILE_STAGES_D128": 2}),
}
if os.environ.get("EXP_CONFIGS"):  # {"label": ["variant", {defines}]}, as call2.sh gives
    CONFIGS = {k: tuple(v) for k, v in json.loads(os.environ["EXP_CONFIGS"]).items()}
if os.environ.get("EXP_ONLY"):
    CONFIGS = {k: v for k, v in CONFIGS.items() if k in os.environ["EXP_ONLY"].split(",") or k == "s36"}
SHAPES = json.loads(os.environ["EXP_SHAPES"]) if os.environ.get("EXP_SHAPES") else [
    "4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
    "4,16,4096,128,causal", "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
    "4,16,4096,64"]


def built():
    from concurrent.futures import ThreadPoolExecutor

    def one(item):
        label, (variant, defines) = item
        impl = variant + "".join(f"_{k}{v}" for k, v in defines.items()) if defines else None
        return label, build.build_variant(get(variant), defines=defines, impl=impl)
    out = {}
    t0 = time.time()
    with ThreadPoolExecutor(6) as pool:
        for label, r in pool.map(one, CONFIGS.items()):
            if not r.ok:
                print(label, "BUILD FAILED", r.log[-3000:], flush=True)
                continue
            d128 = [p for p in r.ptxas if "Li128E" in p.get("kernel", p.get("name", ""))] or r.ptxas
            print(f"built {label}: {len(r.ptxas)} kernels, registers {sorted({p['registers'] for p in r.ptxas})}, "
                  f"spill stores {sum(p['spill_stores'] for p in r.ptxas)} B ({time.time() - t0:.0f} s)", flush=True)
            out[label] = r.load()
    return out


def do_check(kernels):
    cases = check.grid() + check.long_cases() + check.model_cases() + check.many_tile_cases()
    refs = check.ReferenceCache()
    res = {label: [] for label in kernels}
    t0 = time.time()
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
    print(f"check took {time.time() - t0:.0f} s", flush=True)


def do_time(kernels, seconds):
    fa3, cudnn = peers.get("flash_attn3"), peers.get("sdpa_cudnn")
    rows = []
    base = next(iter(kernels))  # the first configuration: every ratio is against it (step 36 in calls 1-2)
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
        line = f"{spec:32s} " + " ".join(f"{l}={med[l]:7.1f}" for l in timers)
        for l in timers:
            if l == base:
                continue
            r = np.log(np.array(samples[base]) / np.array(samples[l]))  # > 0: l faster than the base
            m, se = r.mean(), r.std(ddof=1) / math.sqrt(len(r))
            t = stats.t.ppf(0.975, len(r) - 1)
            line += f" | {base}/{l} {math.exp(m):.4f} [{math.exp(m - t * se):.4f}, {math.exp(m + t * se):.4f}]"
        print(line + f" (n={len(samples[base])})", flush=True)
        rows.append({"shape": spec, "samples": samples})
        del timers
        torch.cuda.empty_cache()
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], f"time_{os.getpid()}.json"), "w") as fh:
            json.dump(rows, fh)


def summary(path):
    """One line a shape of a `time` output: the first configuration over each other one (points only), as the
    calls of ../2026-12-04-kv-apart-step61 print last."""
    import re

    for line in open(path):
        if line.startswith("built"):
            continue
        cells = re.findall(r"(\w+)/(\w+) ([0-9.]+) \[", line)
        print(f"{line.split()[0]:32s} " + " ".join(f"{other}={ratio}" for _, other, ratio in cells))


if __name__ == "__main__":
    if sys.argv[1] == "summary":  # added 2026-12-04 for later calls; earlier calls never pass it
        summary(sys.argv[2])
        sys.exit(0)
    kernels = built()
    if sys.argv[1] == "check":
        do_check(kernels)
    else:
        do_time(kernels, float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
