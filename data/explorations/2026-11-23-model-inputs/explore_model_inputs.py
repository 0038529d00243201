"""Exploration (not the study): steps 28 and 29 (model inputs: bf16, grouped K/V heads) called
through their C entry point fa_forward_ex before lab's Python side takes them.

1. Correctness: fp16 and bf16, D = 64 and 128, K/V head groups 1, 2, 4, 8 and MQA, ragged S,
   causal and not. Reference in fp32 from the upcast inputs, K/V expanded per query head with
   repeat_interleave (SDPA's enable_gqa semantics, independently of the kernel's mapping). Pass:
   max abs error <= 2 x SDPA's own (same dtype, enable_gqa) + slack (1e-3 fp16; 8e-3 bf16, the
   slack scaled by bf16's unit roundoff 2^-8 over fp16's 2^-11), no NaN, output poisoned with NaN
   before the call, inputs untouched, a second call bit-identical. The entry point's refusals
   (H_kv not dividing H, an unknown dtype) are checked too.
2. Timing (hot, the study's randomized interleave and stop rule, SM clock): steps 27/28 and 25/29 on
   fp16 multi-head shapes (the cost of the step), and 28/29 beside SDPA's backends (enable_gqa) on
   model shapes in bf16 and fp16.
usage: PYTHONPATH=. python .../explore_model_inputs.py "B,H,Hkv,S,D,dtype[,c];..."
   (CAP=s per impl; CHECK=0 skips the check; CASES=small for compute-sanitizer;
    VARIANTS=a,b:MACRO=value,...)
"""
import contextlib, ctypes, json, math, os, statistics, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from lab.kernels import build
from lab.kernels.manifest import get
from lab.measure import stats, timing
from lab.measure.clocks import Clocks

DTYPES = {"fp16": (torch.float16, 0, 1e-3), "bf16": (torch.bfloat16, 1, 8e-3)}
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def library(spec):
    """'name' or 'name:MACRO=value' (a configuration built with that define)."""
    name, _, define = spec.partition(":")
    defines = dict([define.split("=")]) if define else None
    r = build.build_variant(get(name), defines=defines, impl=spec.replace(":", "~") if define else None)
    if not r.ok:
        raise SystemExit(f"{name} did not build:\n{r.log[-3000:]}")
    lib = ctypes.CDLL(r.library)
    lib.fa_forward.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.c_float, ctypes.c_int, ctypes.c_void_p]
    if hasattr(lib, "fa_forward_ex"):
        lib.fa_forward_ex.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 5 + [ctypes.c_float, ctypes.c_int,
                                                                                   ctypes.c_int, ctypes.c_void_p]
    return lib


def launcher(lib, q, k, v, o, causal):
    B, H, S, D = q.shape
    scale = 1.0 / math.sqrt(D)
    stream = lambda: torch.cuda.current_stream().cuda_stream  # at call time: the timers capture on a side stream

    def checked(code):
        if code:
            raise RuntimeError(f"launch failed: cudaError {code}")

    if hasattr(lib, "fa_forward_ex"):
        dt = 1 if q.dtype == torch.bfloat16 else 0
        args = (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), B, H, k.shape[1], S, D, scale, int(causal), dt)
        return lambda: checked(lib.fa_forward_ex(*args, stream()))
    assert q.dtype == torch.float16 and k.shape[1] == H
    args = (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), B, H, S, D, scale, int(causal))
    return lambda: checked(lib.fa_forward(*args, stream()))


def reference(q, k, v, causal):
    g = q.shape[1] // k.shape[1]
    qf, kf, vf = q.float(), k.float().repeat_interleave(g, dim=1), v.float().repeat_interleave(g, dim=1)
    s = (qf @ kf.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        S = q.shape[2]
        s.masked_fill_(torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ vf


def sdpa(q, k, v, causal, backend=None):
    ctx = sdpa_kernel([BACKENDS[backend]]) if backend else contextlib.nullcontext()
    with ctx:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=k.shape[1] != q.shape[1])


def launch_code(launch):
    try:
        launch()
        return 0
    except RuntimeError as exc:
        return str(exc)


def check(libs):
    rows, failures = [], 0
    small = os.environ.get("CASES") == "small"  # for compute-sanitizer runs
    heads = ((2, 8, 4), (1, 6, 1)) if small else ((2, 4, 4), (2, 8, 4), (1, 8, 2), (2, 16, 2), (1, 6, 1), (1, 71, 1))
    cases = [(B, H, Hkv, S, D, dt, c)
             for dt in DTYPES for D in (64, 128) for (B, H, Hkv) in heads
             for S in ((17, 129) if small else (1, 17, 129, 300)) for c in (False, True)]
    for (B, H, Hkv, S, D, dt, causal) in cases:
        torch.manual_seed(hash((B, H, Hkv, S, D, dt, causal)) % 2**31)
        dtype, _, slack = DTYPES[dt]
        q = torch.randn(B, H, S, D, device="cuda", dtype=dtype)
        k, v = (torch.randn(B, Hkv, S, D, device="cuda", dtype=dtype) for _ in range(2))
        ref = reference(q, k, v, causal)
        bar = 2 * (sdpa(q, k, v, causal).float() - ref).abs().max().item() + slack
        saved = [t.clone() for t in (q, k, v)]
        for name, lib in libs.items():
            o = torch.full_like(q, float("nan"))
            err = launch_code(launcher(lib, q, k, v, o, causal))
            torch.cuda.synchronize()
            o2 = torch.full_like(q, float("nan"))
            err2 = launch_code(launcher(lib, q, k, v, o2, causal))
            torch.cuda.synchronize()
            e = (o.float() - ref).abs().max().item()
            ok = (err == 0 and err2 == 0 and not torch.isnan(o).any().item() and e <= bar
                  and torch.equal(o, o2) and all(torch.equal(a, b) for a, b in zip(saved, (q, k, v))))
            failures += not ok
            rows.append({"impl": name, "case": [B, H, Hkv, S, D, dt, causal], "err": e, "bar": bar, "ok": ok})
            if not ok:
                print(f"FAIL {name} {(B, H, Hkv, S, D, dt, causal)}: err={e:.2e} bar={bar:.2e} codes={err},{err2}")
    # refusals: H_kv that does not divide H, an unknown dtype
    q = torch.randn(1, 6, 64, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(1, 4, 64, 64, device="cuda", dtype=torch.float16)
    for name, lib in libs.items():
        o = torch.empty_like(q)
        bad_div = lib.fa_forward_ex(q.data_ptr(), k.data_ptr(), k.data_ptr(), o.data_ptr(), 1, 6, 4, 64, 64, 0.125, 0, 0, None)
        bad_dt = lib.fa_forward_ex(q.data_ptr(), q.data_ptr(), q.data_ptr(), o.data_ptr(), 1, 6, 6, 64, 64, 0.125, 0, 7, None)
        ok = bad_div != 0 and bad_dt != 0 and lib.fa_dtypes() == 3 and lib.fa_grouped_kv() == 1
        failures += not ok
        print(f"{name}: refusals {bad_div}, {bad_dt}; dtypes {lib.fa_dtypes()} grouped {lib.fa_grouped_kv()} -> {'ok' if ok else 'FAIL'}")
    print(f"correctness: {len(rows)} (case, impl) checks, {failures} failures")
    return rows, failures


def bench(libs, specs):
    rule = timing.StopRule(rel_ci=0.003, cap_s=float(os.environ.get("CAP", "1.0")), min_samples=40)
    clocks, out = Clocks(), []
    for i, spec in enumerate(specs):
        p = spec.split(",")
        B, H, Hkv, S, D = map(int, p[:5]); dt = p[5]; causal = len(p) > 6 and p[6] == "c"
        dtype = DTYPES[dt][0]
        q = torch.randn(B, H, S, D, device="cuda", dtype=dtype)
        k, v = (torch.randn(B, Hkv, S, D, device="cuda", dtype=dtype) for _ in range(2))
        o = torch.empty_like(q)
        timers = {}
        for name, lib in libs.items():
            if not hasattr(lib, "fa_forward_ex") and (dt != "fp16" or Hkv != H):
                continue
            timers[name] = timing.HotTimer(launcher(lib, q, k, v, o, causal))
        for b in BACKENDS:
            try:
                sdpa(q, k, v, causal, b)
                torch.cuda.synchronize()
            except RuntimeError:
                continue
            timers[f"sdpa_{b}"] = timing.HotTimer(lambda b=b: sdpa(q, k, v, causal, b))
        state = timing.interleave(timers, rule, clocks=clocks, seed=i)
        med = {n: statistics.median(st["samples"]) for n, st in state.items()}
        peers = [n for n in med if n.startswith("sdpa_")]
        best = min(med[n] for n in peers) if peers else float("nan")
        out.append({"spec": spec, "median_us": med, "samples": {n: st["samples"] for n, st in state.items()}})
        print(f"{spec}: " + "  ".join(f"{n}={m:.1f}us({stats.tflops(B, H, S, D, causal, m):.0f}TF,{best / m:.3f}x)"
                                      for n, m in med.items()), flush=True)
    return out


def print_summary(bench_rows):
    """The bench's medians, a shape a line, each with the fastest SDPA backend's over it."""
    print("\nSUMMARY (hot medians; x = fastest SDPA backend / impl)")
    for row in bench_rows:
        med = row["median_us"]
        peers = [n for n in med if n.startswith("sdpa_")]
        best = min(med[n] for n in peers) if peers else float("nan")
        print(f"{row['spec']:<28}" + "  ".join(f"{n}:{m:.1f}us/{best / m:.3f}x" for n, m in med.items()))


if __name__ == "__main__":
    names = os.environ.get("VARIANTS", "balanced_causal,model_inputs,small_grid_tiles,portable_model_inputs").split(",")
    libs = {n: library(n) for n in names}
    result = {}
    if os.environ.get("CHECK", "1") == "1":
        rows, failures = check({n: l for n, l in libs.items() if hasattr(l, "fa_forward_ex")})
        result = {"check": rows, "failures": failures}
    if len(sys.argv) > 1:
        result["bench"] = bench(libs, sys.argv[1].split(";"))
    if os.environ.get("OUT"):
        json.dump(result, open(os.path.join(os.environ["OUT"], "model_inputs.json"), "w"))
    if "bench" in result:
        print_summary(result["bench"])
