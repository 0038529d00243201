"""The title, the headline (which steps ran, the end of the arch-specific branch and the fastest
portable step), the objective and the environment."""

from __future__ import annotations

from lab.report import branches
from lab.report.formats import MISSING, PEER, isnum, fmt, fmt_ci, fmt_us, md_table, new_lines, shape_label
from lab.report.context import Context, companion_of, companion_words
from lab.report.provenance import run_path
from lab.report.load import manifest_variant
from lab.report.tables import hypothesis_rows


def section_title(ctx: Context) -> list[str]:
    data, state, label = ctx.data, ctx.state, ctx.label
    L, add = new_lines()

    add("# FlashAttention forward kernels: optimization ablation report")
    add("")
    add(f"**{label}**")
    add("")
    if state != "complete":
        done = [k[:-2] for k in data.stages if k.endswith("_s") and k != "total_s"]
        add(f"> This run's status.json says **{state}**: it was not marked complete. Stages recorded in "
            f"stages.json: {', '.join(done) if done else 'none'}. The report uses what the folder holds.")
        add("")
    also = "".join(f", and issue 46's {companion_words(c)} rows"
                   + ("" if companion_of(data, ctx.base, c) is data else " on the other GPU")
                   + f" also from its companion's (`{run_path(c)}`)" for c in ctx.companions)
    add(f"Every number below is computed from this run's folder (`{run_path(data)}`){also}; none is typed in.")
    add("")
    return L


def _steps_that_ran(ctx: Context) -> list[str]:
    """Which steps ran on the measured GPU, by branch, and why the others did not (build.json)."""
    data = ctx.data
    by_branch: dict[str, list[str]] = {}
    for v in branches.ran(data):
        by_branch.setdefault(branches.branch(v), []).append(branches.label(v))
    cc = data.env.get("compute_capability")
    gpu = f"{ctx.gpu}" + (f" (compute capability {cc})" if cc else "")
    lines = [f"- Steps that ran on {gpu}, by branch: "
             + "; ".join(f"{arch}: {', '.join(vs)}" for arch, vs in by_branch.items()) + "."]
    skipped = branches.not_run_grouped(data)
    if skipped:
        lines += ["- Steps that did not run: " + "; ".join(f"{', '.join(branches.label(v) for v in vs)} ({why})"
                                                           for vs, why in skipped) + "."]
    else:
        lines += [f"- All {len(branches.steps(data))} steps of the run were built and timed."]
    return lines


def _best_table(ctx: Context, best: str, portable: str) -> list[str]:
    """The judged step (branches.best_step: the arch-specific branch's end, else the fastest portable
    step) and the fastest portable step at the headline shape: µs, TFLOP/s, against sdpa_flash and the
    fastest SDPA backend (one row where they are one step)."""
    data, abl = ctx.data, ctx.abl.set_index("variant", drop=False)
    fastest = ctx.abl.attrs.get("best_sdpa")
    ceiling = data.ceilings["tensor_tflops"] if data.ceilings else None
    roles = [(branches.role(data, best, short=True), best)]
    if portable and portable != best:
        roles.append(("fastest portable step", portable))
    rows = []
    for role, step in roles:
        r = abl.loc[step] if step in abl.index else None
        if r is None or not isnum(r["median_us"]):
            rows.append([role, branches.label(step), branches.branch(step)] + [MISSING] * 5)
            continue
        rows.append([role, branches.label(step), branches.branch(step), fmt_us(r["median_us"]), fmt(r["tflops"], 1),
                     fmt(r["pct_tensor_peak"], 1),
                     fmt_ci(r["vs_sdpa_flash"], r["vs_sdpa_flash_lo"], r["vs_sdpa_flash_hi"]),
                     fmt_ci(r["vs_best_sdpa"], r["vs_best_sdpa_lo"], r["vs_best_sdpa_hi"])])
    ceiling_txt = f"% of the measured {ceiling:.0f} TFLOP/s tensor ceiling" if ceiling else "% of tensor ceiling"
    return [md_table(["", "step", "branch", "median µs", "TFLOP/s", ceiling_txt, f"vs {PEER} [95% CI]",
                      f"vs fastest SDPA ({fastest or MISSING}) [95% CI]"], rows, "lllrrrrr"), ""]


def section_headline(ctx: Context) -> list[str]:
    data, head, abl = ctx.data, ctx.head, ctx.abl
    L, add = new_lines()
    add("## Headline")
    add("")
    if head is None or not len(abl) or not abl["median_us"].notna().any():
        return L + ["No samples at any shape: there is nothing to report on timing.", ""]
    best, portable = branches.best_step(data), branches.best_portable(data, head)
    add(f"- Headline shape {shape_label(head)}, hot mode.")
    L += _steps_that_ran(ctx)
    line = f"- {branches.role(data, best).capitalize()}: {best}"
    if portable and portable != best:
        line += f"; the fastest portable step here: {portable}"
        end = branches.portable_end(data)
        if end and end != portable:
            line += f" (the portable branch ends at {end})"
    add(line + ".")
    add("")
    L += _best_table(ctx, best, portable)
    root = branches.first_timed_ancestor(data, best, head)
    tot = data.speedup(best, root, head, "hot") if root != best else None
    if tot:
        path = branches.lineage(best)
        add(f"- Whole ladder, {root} → {best} (along steps {branches.numbers(path[path.index(root):])}): "
            f"{fmt_ci(tot.ratio, tot.lo, tot.hi)} "
            f"({fmt_us(data.median(root, head, 'hot'))} µs → {fmt_us(data.median(best, head, 'hot'))} µs).")
    verdicts = [f"{r.variant}: {r.hypothesis_verdict}" + (f" (at {r.judged_at})" if r.judged_at else "")
                for r in hypothesis_rows(data, abl).itertuples() if r.parent]
    add(f"- Hypotheses, each step against its parent: {'; '.join(verdicts)}.")
    add("")
    return L


def section_objective(ctx: Context) -> list[str]:
    data = ctx.data
    L, add = new_lines()
    add("## Objective")
    add("")
    names = data.variants
    add(f"The ladder has {len(names)} hand-written FlashAttention forward kernels ({', '.join(names)}), each its "
        "parent (an earlier step) plus one optimization, with a hypothesis, the profiler metric it should move and "
        "a predicted speedup written down before measuring (`kernels/variants/manifest.toml`). Its branches, each "
        f"shown in its own order: {branches.summary(names)}. This report measures what each step bought against "
        "its parent, whether the profiler saw the predicted mechanism, and how far each branch's end is "
        "from PyTorch's `scaled_dot_product_attention` (SDPA) backends on the same GPU.")
    arch_specific = [v for v in (manifest_variant(n) for n in names) if v and v.arch != "portable"]
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
    data, env, state, gpu, date = ctx.data, ctx.data.env, ctx.state, ctx.gpu, ctx.date
    L, add = new_lines()
    add("## Environment")
    add("")
    dirty = env.get("git_dirty")
    env_rows = [
        ["GPU", f"{gpu} (compute capability {env.get('compute_capability', MISSING)})"],
        ["SMs", env.get("sm_count", MISSING)],
        ["L2 / device memory", f"{env['l2_bytes'] / 2**20:.0f} MiB / {env['memory_bytes'] / 2**30:.0f} GiB"
         if isnum(env.get("l2_bytes")) and isnum(env.get("memory_bytes")) else MISSING],
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
    for name, source in data.peer_sources().items():  # runs before issue 45 recorded none
        env_rows.append([f"peer {name}", source])
    if data.stages:
        env_rows.append(["stage times", ", ".join(f"{k[:-2]} {v} s" for k, v in data.stages.items()
                                                   if k.endswith("_s") and isnum(v))])
    add(md_table(["", "value"], env_rows))
    add("")
    return L
