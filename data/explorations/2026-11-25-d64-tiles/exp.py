"""Quick experiment timer: build configurations of a variant (-D macros), check each against an
fp32 reference once, then time them interleaved (events around blocks of launches), print medians."""
import dataclasses, json, math, random, sys, time
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from lab.kernels import build
from lab.kernels.manifest import get

def parse(s):
    parts = s.split(","); B, H, S, D = map(int, parts[:4]); causal = "causal" in parts
    kv = H; dt = torch.float16
    for p in parts[4:]:
        if p.startswith("kv"): kv = int(p[2:])
        if p == "bf16": dt = torch.bfloat16
    return B, H, S, D, causal, kv, dt

def main():
    spec = json.loads(sys.argv[1])  # {"label": [variant, {defines}], ...}
    shapes = sys.argv[2].split(";")
    check = len(sys.argv) <= 3 or sys.argv[3] != "nocheck"
    kernels = {}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(8) as ex:
        results = dict(zip(spec, ex.map(lambda it: build.build_variant(dataclasses.replace(get(it[0]), twin=None), defines=it[1], impl=("x" + "_".join(f"{k}{v}" for k, v in sorted(it[1].items()))) if it[1] else None, force=False), spec.values())))
    for label, (variant, defines) in spec.items():
        r = results[label]
        if not r.ok:
            print(label, "BUILD FAILED", r.log[-2000:]); continue
        kernels[label] = r.load()
        regs = [(p["head_dim"], p["dtype"], p["registers"], p["spill_stores"]) for p in r.ptxas]
        print(f"built {label}: {regs}", flush=True)
    rows = []
    for s in shapes:
        B, H, S, D, causal, kv, dt = parse(s)
        g = torch.Generator(device="cuda").manual_seed(1)
        q = torch.randn(B, H, S, D, device="cuda", dtype=dt, generator=g)
        k = torch.randn(B, kv, S, D, device="cuda", dtype=dt, generator=g)
        v = torch.randn(B, kv, S, D, device="cuda", dtype=dt, generator=g)
        out = torch.empty_like(q)
        launches = {}
        for label, kern in kernels.items():
            launches[label] = (lambda kern=kern: kern.launch(q, k, v, out, causal))
        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=kv != H)
        launches["cudnn"] = cudnn
        if check:
            ref = None
            if B * H * S * S <= 2**31:
                ref = F.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(H // kv, 1),
                                                     v.float().repeat_interleave(H // kv, 1), is_causal=causal)
            for label in kernels:
                out.fill_(float("nan")); launches[label](); torch.cuda.synchronize()
                err = (out.float() - ref).abs().max().item() if ref is not None else float("nan")
                print(f"  check {s} {label}: max err {err:.4g}{'  NAN' if torch.isnan(out).any() else ''}")
        est = {}
        for label, f in launches.items():
            f(); torch.cuda.synchronize()
            t0 = time.perf_counter(); f(); f(); f(); torch.cuda.synchronize(); est[label] = (time.perf_counter() - t0) / 3
        n = max(1, min(20, int(2e-3 / max(est.values()))))
        graphs = {}
        for label, f in list(launches.items()):
            s_ = torch.cuda.Stream(); s_.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s_):
                f(); f()
            torch.cuda.current_stream().wait_stream(s_); torch.cuda.synchronize()
            gr = torch.cuda.CUDAGraph()
            with torch.cuda.graph(gr):
                for _ in range(n): f()
            graphs[label] = gr
        launches = {l: (lambda gr=gr: gr.replay()) for l, gr in graphs.items()}
        samples = {l: [] for l in launches}
        t_end = time.perf_counter() + float(sys.argv[4]) if len(sys.argv) > 4 else time.perf_counter() + 3.0
        order = list(launches)
        while time.perf_counter() < t_end:
            random.shuffle(order)
            for label in order:
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                launches[label]()
                e1.record(); e1.synchronize()
                samples[label].append(e0.elapsed_time(e1) * 1000 / n)
        med = {l: sorted(x)[len(x) // 2] for l, x in samples.items()}
        flops = 4 * B * H * S * S * D / (2 if causal else 1)
        base = med[next(iter(kernels))] if kernels else None
        line = [f"{s:30s}"] + [f"{l}={med[l]:8.1f}us({base / med[l]:.3f}x,{med['cudnn'] / med[l]:.3f}c)" for l in launches]
        print(" ".join(line), flush=True)
        rows.append({"shape": s, "median_us": med, "n": {l: len(x) for l, x in samples.items()}})
    import os
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "exp.json"), "a") as fh:
            fh.write(json.dumps(rows) + "\n")

main()
