from __future__ import annotations

from lab.report.common import MISSING, PEER, _isnum, fmt, fmt_ci, fmt_us, md_table, shape_label
from lab.report.load import _variant
from lab.report.tables import hypothesis_rows
from lab.report.helpers import _run_path
from lab.report.context import Context


def section_title(ctx: Context) -> list[str]:
    data = ctx.data
    state = ctx.state
    label = ctx.label
    L: list[str] = []
    add = L.append

    add("# FlashAttention forward kernels: optimization ablation report")
    add("")
    add(f"**{label}**")
    add("")
    if state != "complete":
        done = [k[:-2] for k in data.stages if k.endswith("_s") and k != "total_s"]
        add(f"> This run's status.json says **{state}**: it was not marked complete. Stages recorded in "
            f"stages.json: {', '.join(done) if done else 'none'}. The report uses what the folder holds.")
        add("")
    add(f"Every number below is computed from this run's folder (`{_run_path(data)}`); none is typed in.")
    add("")
    return L


def section_headline(ctx: Context) -> list[str]:
    data = ctx.data
    head = ctx.head
    abl = ctx.abl
    L: list[str] = []
    add = L.append
    add("## Headline")
    add("")
    if head is not None and len(abl) and abl["median_us"].notna().any():
        measured = abl[abl["median_us"].notna()]
        first, last = measured.iloc[0], measured.iloc[-1]
        best = abl.attrs.get("best_sdpa")
        add(f"- Headline shape {shape_label(head)}, hot mode.")
        add(f"- {last['title']} ({last['variant']}), the last measured step: {fmt_us(last['median_us'])} µs, "
            f"{fmt(last['tflops'], 1)} TFLOP/s"
            + (f" ({fmt(last['pct_tensor_peak'], 1)} % of the measured {data.ceilings['tensor_tflops']:.0f} "
               f"TFLOP/s tensor-core ceiling)" if data.ceilings and _isnum(last['pct_tensor_peak']) else "") + ".")
        if first["variant"] != last["variant"]:
            tot = data.speedup(last["variant"], first["variant"], head, "hot")
            if tot:
                add(f"- Whole ladder, {first['variant']} → {last['variant']}: {fmt_ci(tot.ratio, tot.lo, tot.hi)} "
                    f"({fmt_us(first['median_us'])} µs → {fmt_us(last['median_us'])} µs).")
        if _isnum(last["vs_sdpa_flash"]):
            add(f"- Against {PEER}: {fmt_ci(last['vs_sdpa_flash'], last['vs_sdpa_flash_lo'], last['vs_sdpa_flash_hi'])}"
                f" ({PEER} {fmt_us(data.median(PEER, head, 'hot'))} µs); against the fastest SDPA backend here, "
                f"{best}: {fmt_ci(last['vs_best_sdpa'], last['vs_best_sdpa_lo'], last['vs_best_sdpa_hi'])} "
                f"({fmt_us(data.median(best, head, 'hot'))} µs).")
        verdicts = [f"{r.variant}: {r.hypothesis_verdict}" + (f" (at {r.judged_at})" if r.judged_at else "")
                    for r in hypothesis_rows(data, abl).itertuples() if r.parent]
        add(f"- Hypotheses: {'; '.join(verdicts)}.")
    else:
        add("No samples at any shape: there is nothing to report on timing.")
    add("")
    return L


def section_objective(ctx: Context) -> list[str]:
    data = ctx.data
    L: list[str] = []
    add = L.append
    add("## Objective")
    add("")
    names = data.variants
    add(f"The ladder has {len(names)} hand-written FlashAttention forward kernels ({', '.join(names)}), each its "
        "parent plus one optimization, with a hypothesis, the profiler metric it should move and a predicted "
        "speedup written down before measuring (`kernels/variants/manifest.toml`). This report measures what "
        "each step bought, whether the profiler saw the predicted mechanism, and how far the last step is from "
        "PyTorch's `scaled_dot_product_attention` (SDPA) backends on the same GPU.")
    arch_specific = [v for v in (_variant(n) for n in names) if v and v.arch != "portable"]
    if arch_specific:
        archs = sorted({v.arch for v in arch_specific})
        add("")
        add(f"Architecture-specific steps ({', '.join(archs)} only; marked so in the tables): "
            + ", ".join(f"{v.index} {v.name}" for v in arch_specific)
            + ". They use instructions other GPUs lack (on sm_90a: wgmma, TMA, setmaxnreg), are built only for that "
            "target and are refused with the reason elsewhere, where the portable steps still build and run.")
    add("")
    return L


def section_environment(ctx: Context) -> list[str]:
    data = ctx.data
    env = ctx.data.env
    state = ctx.state
    gpu = ctx.gpu
    date = ctx.date
    L: list[str] = []
    add = L.append
    add("## Environment")
    add("")
    dirty = env.get("git_dirty")
    env_rows = [
        ["GPU", f"{gpu} (compute capability {env.get('compute_capability', MISSING)})"],
        ["SMs", env.get("sm_count", MISSING)],
        ["L2 / device memory", f"{env['l2_bytes'] / 2**20:.0f} MiB / {env['memory_bytes'] / 2**30:.0f} GiB"
         if _isnum(env.get("l2_bytes")) and _isnum(env.get("memory_bytes")) else MISSING],
        ["max SM / memory clock",
         f"{env.get('sm_clock_max_mhz', MISSING)} MHz / {env.get('mem_clock_max_mhz', MISSING)} MHz"],
        ["power limit", f"{env.get('power_limit_w', MISSING)} W"],
        ["driver", env.get("driver", MISSING)],
        ["CUDA runtime (torch)", env.get("cuda_runtime", MISSING)],
        ["nvcc", env.get("nvcc", MISSING)],
        ["torch", env.get("torch", MISSING)],
        ["cuDNN", env.get("cudnn", MISSING)],
        ["Python", env.get("python", MISSING)],
        ["git sha", f"`{env.get('git_sha', MISSING)}`"],
        ["dirty tree", MISSING if dirty is None else ("yes" if dirty else "no")],
        ["run id", f"`{data.run_id}`"],
        ["date (UTC)", date],
        ["run state", state],
    ]
    if data.stages:
        env_rows.append(["stage times", ", ".join(f"{k[:-2]} {v} s" for k, v in data.stages.items()
                                                   if k.endswith("_s") and _isnum(v))])
    add(md_table(["", "value"], env_rows))
    add("")
    return L
