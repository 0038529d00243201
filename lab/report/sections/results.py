"""Per-shape results, the TFLOP/s-vs-S sweep, the profiler's findings, what is missing, the
threats to validity and how to reproduce the run."""

from __future__ import annotations

import shlex

from lab.report import branches
from lab.kernels.sass_mix import CLASS_NAMES as SASS_CLASSES
from lab.kernels.shape import Shape
from lab.studies.sass_compare import DATAPATHS, mask_label, row_causal
from lab.report.formats import (FIGURES, MISSING, PEER, fmt, fmt_ci, fmt_p, fmt_us, isnum, md_table, new_lines,
                                shape_label)
from lab.report.context import Context
from lab.report.figures import figure_roofline, figure_stalls, figure_sweep
from lab.report.validity import threats
from lab.report.load import RunData, first_line, manifest_variants
from lab.report.findings import profiler_findings
from lab.report.tables import shape_table, capped_rows, clock_summary, crossval_table, noise_floor, shape_group
from lab.report.traffic import TRAFFIC_FLAG, dram_flags, dram_traffic
from lab.report.sections.reference import REFERENCE
from lab.studies.measure_shape import ALL_THROTTLED
from lab.studies.params import RUN_OPTIONS, RunParams


def shape_note_text(data: RunData, shape: Shape) -> str:
    out = []
    for note in data.shape_notes or []:
        if note.get("shape") != shape.id:
            continue
        for impl, why in (note.get("unsupported") or {}).items():
            out.append(f"{impl} unsupported: {first_line(why)}")
        for impl, why in (note.get("not_taken") or {}).items():  # runs since issue 22
            out.append(f"{impl} not taken: {first_line(why)}")
        for impl, why in (note.get("errors") or {}).items():
            name, _, mode = impl.rpartition("/")
            # dropped when recorded ("replicate N: " before it, merged), kept by today's rule (records.dropped)
            if str(why).endswith(ALL_THROTTLED) and data.lat(name, shape, mode) is not None:
                continue
            out.append(f"{impl} failed: {first_line(why)}")
    for name in data.variants:
        if name in data.excluded:
            out.append(f"{name} not timed (excluded: {first_line(data.excluded[name])})")
    return ("Notes: " + "; ".join(out) + ".") if out else ""


def section_per_shape(ctx: Context) -> list[str]:
    data = ctx.data
    L, add = new_lines()
    add("## Per-shape results")
    add("")
    add(f"Every implementation at every measured shape: medians (µs), TFLOP/s and the speedup over {PEER} with "
        "its 95 % CI, hot and cold. `__aa` is the A/A twin.")
    add("")
    groups: dict = {}
    for s in data.measured_shapes:
        groups.setdefault(shape_group(s), []).append(s)
    not_measured = [s for s in data.shapes if s not in data.measured_shapes]
    modes = [m for m in ("hot", "cold") if m in data.modes] + [m for m in data.modes if m not in ("hot", "cold")]
    for gname in ("canonical", "large", "sweep", "models", "other"):
        if gname not in groups:
            continue
        add(f"### {gname.capitalize()} shapes")
        add("")
        for s in groups[gname]:
            t = shape_table(data, s)
            add(f"#### {shape_label(s)}")
            add("")
            headers, align = ["impl"], "l"
            for m in modes:
                headers += [f"{m} median µs", f"{m} TFLOP/s", f"{m} vs {PEER} [95% CI]", f"{m} n"]
                align += "rrrr"
            rows = []
            for r in t.to_dict("records"):
                row = [r["impl"]]
                for m in modes:
                    stop = r.get(f"{m}_stopped_by")
                    row += [fmt_us(r[f"{m}_median_us"]), fmt(r[f"{m}_tflops"], 1),
                            fmt_ci(r[f"{m}_vs_sdpa_flash"], r[f"{m}_vs_sdpa_flash_lo"], r[f"{m}_vs_sdpa_flash_hi"])
                            if r["impl"] != PEER else "(reference)",
                            f"{r[f'{m}_n']}" + (" (cap)" if stop == "cap" else "")]
                rows.append(row)
            add(md_table(headers, rows, align))
            extra = shape_note_text(data, s)
            if extra:
                add("")
                add(extra)
            add("")
    if not_measured:
        add("Shapes in params.json with no samples: " + "; ".join(shape_label(s) for s in not_measured) + ".")
        add("")
    if not data.measured_shapes:
        add("No samples were recorded (samples.parquet missing or empty).")
        add("")

    nf = noise_floor(data)
    add("### Noise floor (A/A)")
    add("")
    if len(nf):
        add(md_table(["shape", "mode", "A/A pair", "speedup [95% CI]", "p (BH)", "verdict"],
                     [[r.shape, r.mode, f"{r.impl} vs {r.base}", fmt_ci(r.ratio, r.lo, r.hi), fmt_p(r.p_adjusted),
                       r.verdict] for r in nf.itertuples()], "llllrl"))
    else:
        add("No A/A twin was measured.")
    add("")
    return L


def section_sweep(ctx: Context) -> list[str]:
    data, notes, figdir = ctx.data, ctx.notes, ctx.figdir
    L, add = new_lines()
    add("## TFLOP/s against sequence length")
    add("")
    notes["sweep"] = figure_sweep(data, figdir / FIGURES["sweep"])
    ctx.add_figure(add, "sweep", "TFLOP/s (hot median) against S")
    return L


def section_profiler(ctx: Context) -> list[str]:
    data, head, abl, notes, figdir = ctx.data, ctx.head, ctx.abl, ctx.notes, ctx.figdir
    L, add = new_lines()
    add("## Top 3 profiler findings")
    add("")
    pshape = data.profile_shape_for(head) if head else None
    findings = profiler_findings(data, abl) if len(abl) else []
    if findings:
        add(f"At the profiled shape {shape_label(pshape)}, computed from profile.csv (the largest relative move of "
            f"the tracked metrics between a step and its parent, and {branches.best_step(data)} "
            f"({branches.role(data, branches.best_step(data))}) against the fastest profiled SDPA kernel):")
        add("")
        for i, f in enumerate(findings, 1):
            add(f"{i}. {f}")
    else:
        add("No profiler findings: " + (data.profile_note or "no profiled kernels match the headline shape") + ".")
    add("")
    notes["roofline"] = figure_roofline(data, figdir / FIGURES["roofline"])
    notes["stalls"] = figure_stalls(data, pshape, figdir / FIGURES["stalls"]) if data.profile is not None else \
        "no profile data: warp-stall figure skipped"
    ctx.add_figure(add, "roofline", "Roofline: measured tensor-core and DRAM ceilings; each profiled "
                   "kernel at its achieved TFLOP/s and arithmetic intensity")
    ctx.add_figure(add, "stalls", "Warp-stall breakdown per implementation" +
                   (f" at {shape_label(pshape)}" if pshape else ""))
    L += _dram_traffic(data)
    L += _sass_mix(data)
    return L


def _dram_traffic(data) -> list[str]:
    """The branch end's and the peers' DRAM bytes over each profiled shape's io_bytes, and every profiled launch that
    moved TRAFFIC_FLAG times its inputs and output or more."""
    L, add = new_lines()
    end = branches.best_step(data)
    if data.profile is None or not len(data.profile) or not end:
        return L
    peers = [i for i in (REFERENCE, "sdpa_cudnn", "sdpa_flash") if i in set(data.profile["impl"])]
    table = dram_traffic(data.profile, end, peers)
    flags = dram_flags(data.profile)
    if not len(table) and not flags:
        return L
    add("### DRAM traffic against the inputs and output")
    add("")
    add("Nsight Compute's DRAM bytes of one launch (read and written) over the bytes the call moves at the least: Q, "
        "K and V read once and O written once. Above 1, the launch read again what the L2 did not keep. Timed hot, "
        "such traffic can hide behind the math; at the power cap it costs clock.")
    add("")
    if len(table):
        impls = [end, *peers]
        rows = [[shape_label(r["shape"]), fmt(r["io_bytes"] / 1e6, 0),
                 *(f"{fmt(r[f'{i}_bytes'] / 1e6, 0)} ({fmt(r[f'{i}_x'], 2)}×)" if isnum(r[f"{i}_bytes"]) else MISSING
                   for i in impls)] for r in table.to_dict("records")]
        add(md_table(["shape", "inputs and output MB", *(f"{i} MB (× that)" for i in impls)], rows,
                     "lr" + "r" * len(impls)))
        add("")
    if flags:
        by_shape = {}
        for shape, impl, x, b in flags:
            by_shape.setdefault(shape, []).append(f"`{impl}` {x:.2f}× ({b / 1e6:.0f} MB)")
        add(f"Profiled launches that moved {TRAFFIC_FLAG:g}× their inputs and output or more: "
            + "; ".join(f"at {shape_label(s)}: {', '.join(v)}" for s, v in by_shape.items()) + ".")
    else:
        add(f"No profiled launch moved {TRAFFIC_FLAG:g}× its inputs and output or more.")
    add("")
    return L


def _sass_mix(data) -> list[str]:
    """The branch end's K/V loops beside FA3's, instruction class by class (sass_mix.json)."""
    L, add = new_lines()
    mix = data.sass_mix
    if mix is None:
        return L
    add("### The main loop, instruction by instruction")
    add("")
    if not mix.get("rows"):
        add("Not available for this run: " + "; ".join(mix.get("errors") or ["no kernels read"]) + ".")
        add("")
        return L
    with_datapaths = all("datapaths_per_128_keys" in r for r in mix["rows"])  # runs from 2026-12-04 on
    add("Static counts from the SASS (`lab.kernels.sass_mix`): the shortest path through each kernel's K/V loop "
        "(no mask, where the loop branches on one), per 128 keys of a warp's 16 query rows, fp16; the keys an "
        "iteration covers come from its MMAs' work, so kernels of different tiles compare. What a warp issues, "
        "not how long each instruction takes. A kernel whose mask is decided at run time serves causal and full "
        "calls alike; FA3 compiles one kernel for each mask, and so does a step from 66 on for non-causal D = 128 "
        "calls." + (" Across the classes, the uniform datapath's instructions (one value a warp) and the R2UR "
                    "(a vector register copied into a uniform one)." if with_datapaths else ""))
    add("")
    classes = [c for c in SASS_CLASSES if any(r["per_128_keys"].get(c) for r in mix["rows"])]
    datapaths = DATAPATHS if with_datapaths else {}
    rows = [[r["impl"], r["kernel"], str(r["head_dim"]), mask_label(row_causal(r)),
             f"{r['keys_per_iteration']:g}", f"{r['instructions_per_128_keys']:.0f}",
             *(f"{r['per_128_keys'][c]:.0f}" for c in classes),
             *(f"{r['datapaths_per_128_keys'][d]:.0f}" for d in datapaths)] for r in mix["rows"]]
    add(md_table(["impl", "kernel", "D", "mask", "keys an iteration", "instructions", *classes, *datapaths.values()],
                 rows,
                 "llllr" + "r" * (1 + len(classes) + len(datapaths))))
    add("")
    if mix.get("errors"):
        add("Not read: " + "; ".join(mix["errors"]) + ".")
        add("")
    return L


def section_missing(ctx: Context) -> list[str]:
    data = ctx.data
    L, add = new_lines()
    if data.missing:
        add("## What is missing from this run")
        add("")
        for m in data.missing:
            add(f"- {m}")
        add("")
    return L


def section_threats(ctx: Context) -> list[str]:
    data, abl = ctx.data, ctx.abl
    L, add = new_lines()
    add("## Threats to validity")
    add("")
    xgaps, clk, cap_rows = crossval_table(data)[1], clock_summary(data), capped_rows(data)
    for t in threats(data, abl, xgaps, clk, cap_rows, ctx.base):
        add(f"- {t}")
    add("")
    return L


def reproduce_args(p: RunParams) -> str:
    """The make variables that start the same run again: every run option as the run recorded it
    (RunParams.as_text), quoted for the shell; the steps only where they were not the whole ladder."""
    text = p.as_text()
    whole = list(p.variants) == [v.name for v in manifest_variants()]
    return " ".join(f"{o.make}={shlex.quote(text[o.name])}" for o in RUN_OPTIONS
                    if text[o.name] != "" and not (o.name == "variants" and whole))


def section_reproduce(ctx: Context) -> list[str]:
    data, env = ctx.data, ctx.data.env
    L, add = new_lines()
    add("## How to reproduce")
    add("")
    add("```bash")
    add(f"git checkout {env.get('git_sha', '<sha>')}")
    add(f"make ablation {reproduce_args(data.run_params)}   # on a GPU machine: a new run")
    named = (f" BASE={ctx.base.run_id}" if ctx.base is not None else "") + (
        f" COMPANION={shlex.quote(' '.join(c.run_id for c in ctx.companions))}" if ctx.companions else "")
    add(f"make report RUN={data.run_id}{named}   # this report, from this run's folder (no GPU needed)")
    add(f"make replicate RUN=<the new run> BASE={data.run_id}   # does it replicate? each step, knock-out and bar row")
    add(f"python -m lab.report {data.run_id} --reports-dir reports   # the same, directly")
    add("```")
    add("")
    add("Every run parameter is on the `make ablation` line, as the run's params.json holds it (the steps only where "
        "the run was not the whole ladder). Code diffs between neighbouring steps are in `ablation.html`.")
    add("")

    return L
