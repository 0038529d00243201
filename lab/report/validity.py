"""The threats to validity the report lists: clocks, cross-validation, capped rows, the intervals' scope, a run
resumed on another machine, excluded variants, sources that no longer match the run's build, and what the profile
does not show."""

from __future__ import annotations

import re

import pandas as pd

from lab.kernels.shape import Shape
from lab.measure.timing import recorded_flush
from lab.report import provenance
from lab.report.formats import MISSING, XVAL_GAP, isnum, shape_label
from lab.report.load import RunData, first_line
from lab.report.tables import capped_label, clock_range, wider_than


def scope_of_the_intervals(data: RunData, env: dict, base: RunData | None = None) -> str:
    """What the run's intervals cover: one process, or R replicate processes of one run on one GPU;
    and where the variation between runs and GPUs is shown, if anywhere."""
    R = data.run_params.replicates
    what = (f"One GPU ({env.get('gpu', 'unknown')}), one run in {R} replicate processes: the intervals hold the "
            "variance between those processes, not between boards or drivers" if R > 1 else
            f"One GPU ({env.get('gpu', 'unknown')}), one run, one process: nothing here shows how the results "
            "vary between boards, drivers or runs")
    if base is not None:
        return (f"{what}; how the effects move in a second run (`{base.run_id}`, {base.env.get('gpu', 'unknown')}) "
                "is in \"Does it replicate?\".")
    return f"{what}; comparisons across runs go through `make replicate` (`python -m lab replicate`)."


def resumed_threat(resumes: list[dict], env: dict) -> str | None:
    """Where a run was stopped and resumed (resumes.json, lab.studies.resume.resume_here): which stages ran after
    each resume, when, on which host and GPU; None for a run measured in one go."""
    if not resumes:
        return None
    gpu = env.get("gpu", "GPU")

    def where(r: dict) -> str:
        if r.get("same_gpu"):
            return "the GPU it started on"
        if r.get("gpu_uuid") and env.get("gpu_uuid"):
            return f"another {gpu} ({r['gpu_uuid']})"
        return f"a {gpu} that the records cannot tell from the one it started on"

    parts = [f"{', '.join(r.get('stages') or []) or 'no stage left'} from {r.get('utc', MISSING)} on host "
             f"`{r.get('host', MISSING)}`, {where(r)}, driver {r.get('driver') or MISSING}" for r in resumes]
    return (f"The run was stopped and resumed {len(resumes)} time(s) (resumes.json): {'; '.join(parts)}. Each resume "
            "was refused unless the code, the toolchain and the GPU model with its power limit and clock ceiling "
            "matched the run's start; a stage resumed midway may hold replicates of two GPUs, which replicates.json "
            "names.")


def _capped_threat(cap_rows: list, target: float) -> str:
    """The time cap's rows whose median CI is wider than the stopping rule's target, by shape and mode (a lone row
    by its label, more than one by their count and range of widths)."""
    wide = wider_than(cap_rows, target)
    head = f"{len(cap_rows)} row(s) hit the time cap before the CI rule stopped them (Methodology lists them); "
    if not wide:
        return head + f"none has a median CI half-width wider than the ±{target * 100:.1f} % target."
    groups: dict[tuple[str, str], list] = {}
    for c in wide:
        groups.setdefault((c.shape, c.mode), []).append(c)
    parts = [capped_label(g[0]) if len(g) == 1 else
             f"{len(g)} at {shape} {mode} ({min(c.half_width for c in g) * 100:.2f}-"
             f"{max(c.half_width for c in g) * 100:.2f} %)"
             for (shape, mode), g in sorted(groups.items(), key=lambda kv: -len(kv[1]))]
    return head + (f"{len(wide)} of them have a median CI half-width wider than the ±{target * 100:.1f} % target: "
                   + "; ".join(parts) + ".")


# A read after the flush this much slower than one from the L2 at least: below it, the probe does not show the flush
# evicting (a loose floor: a 30 MB read from DRAM rather than the L2 is expected to take well over 1.1x as long).
FLUSH_PROBE_FLOOR = 1.1


def cold_flush_threat(flush: dict | None) -> str | None:
    """What the cold rows' flush leaves open (env.json's cold_flush, lab.measure.timing.L2Flusher): the overwrite's
    write-back in every cold sample; a read flush whose probe failed or did not read slower after it; else None."""
    if recorded_flush({"cold_flush": flush}) != "read":
        return ("The cold flush overwrote a buffer of twice the L2, leaving up to the L2's size of dirty lines that "
                "each cold launch wrote back beside its own traffic: the memory-bound calls pay it most (the decode "
                "section reads it off them; data/explorations/2026-12-04-cold-flush-writeback), and their cold "
                "ratios lean towards 1. Later runs read the buffer instead.")
    if flush.get("error"):
        return f"The cold flush's probe failed ({flush['error'][:200]}): that the flush empties the L2 is not shown."
    l2, after = flush.get("l2_read_us"), flush.get("flushed_read_us")
    if isnum(l2) and isnum(after) and after < FLUSH_PROBE_FLOOR * l2:
        return (f"The cold flush's probe read {after:.1f} µs after the flush against {l2:.1f} µs from the L2 (under "
                f"{FLUSH_PROBE_FLOOR:g}x): it does not show the flush emptying the L2, so cold rows may have found "
                "their inputs there.")
    return None


def threats(data: RunData, abl: pd.DataFrame, xgaps, clk, cap_rows, base: RunData | None = None) -> list[str]:
    t = []
    env = data.env
    t += _profile_threats(data)
    # clocks
    if clk.get("clock_min") is not None:
        t.append(f"Clocks were not locked. NVML's SM clock readings, taken at block boundaries and not per "
                 f"launch, were {clock_range(clk)}; power-cap slowdowns (limit {env.get('power_limit_w', MISSING)} "
                 "W) are not flagged as throttling, so a power-capped clock dip inside a block would go unnoticed; "
                 "long kernels at the large shapes are the most exposed.")
    else:
        t.append("No SM clock readings were recorded: clock changes during the run are not visible.")
    if clk.get("throttled"):
        t.append(f"{clk['throttled']} samples were taken during a thermal/hardware slowdown (a hardware one, in the "
                 "sustained mode) and dropped.")
    # cross-validation
    if xgaps:
        t.append(f"Cross-validation gaps above {XVAL_GAP * 100:.0f} % between this harness and triton's "
                 f"do_bench_cudagraph: {'; '.join(xgaps)}. Absolute times at those shapes carry that uncertainty "
                 "(ratios between implementations timed in the same interleave are less affected).")
    elif not data.crossval:
        t.append("The harness was not cross-validated in this run (crossval.json missing or empty).")
    if cap_rows:
        t.append(_capped_threat(cap_rows, data.run_params.replicate_rule().rel_ci))
    if data.summary is not None and "n" in data.summary:
        floor = data.run_params.min_samples
        small = int((data.summary["n"] <= floor).sum())
        if small:
            t.append(f"{small} of {len(data.summary)} rows met the CI target at the {floor}-sample minimum, so their "
                     f"medians and CIs rest on {floor} samples (in hot mode each a CUDA-graph replay averaging many "
                     "launches); slow drifts longer than their sampling window would not show in them.")
    t.append(scope_of_the_intervals(data, env, base))
    if "cold" in data.run_params.modes and (flush := cold_flush_threat(env.get("cold_flush"))):
        t.append(flush)
    if resumed := resumed_threat(data.resumes, env):
        t.append(resumed)
    if data.excluded:
        t.append("Excluded variants (not timed): "
                 + "; ".join(f"{k}: {first_line(v)}" for k, v in data.excluded.items()) + ".")
    if data.env.get("git_dirty"):
        t.append("The working tree was dirty when the run started: the git sha does not fully identify the code.")
    same, differ = provenance.source_check(data)
    if differ:
        changed = provenance.changed_files(data, differ)
        where = f" (files changed since: {', '.join(f'`kernels/{f}`' for f in changed)})" if changed else ""
        t.append(f"The kernel sources in this tree differ from those the run built ({', '.join(differ)}){where}: the "
                 "code diffs in ablation.html may not show what was measured.")
    elif same:
        t.append(f"The code diffs come from the working tree; every variant's source hash matches the run's "
                 f"build.json ({len(same)} of {len(data.variants)} checked).")
    if data.status.get("state") != "complete":
        t.append(f"The run's state is '{data.status.get('state')}', not 'complete'.")
    return t


def _profile_threats(data: RunData) -> list[str]:
    """What the profile does not show: shapes timed but not profiled, the profile stand-in of the headline,
    ncu's replayed single launch against the timed medians; or that there is no profile."""
    t = []
    if data.profile is not None and len(data.profile):
        profiled = {Shape.from_row(r) for r in data.general_profile().itertuples()}
        judged = data.judged_only_shapes()
        timed = data.measured_shapes
        unprof = [s for s in timed if s not in profiled]
        stand_in = sorted({shape_label(data.profile_shape_for(s)) for s in unprof if data.profile_shape_for(s)})
        if unprof:
            models = sum(not s.plain for s in unprof)  # the models shapes: never profiled (their scope)
            which = ("all causal shapes, and other B/H at a profiled S and D" if not models else
                     f"all causal shapes, other B/H at a profiled S and D, and the {models} bf16 or grouped-query "
                     "shapes, which no profile stands in for")
            t.append(f"Profiled shapes differ from timed ones: {len(unprof)} of {len(timed)} timed shapes were not "
                     f"profiled themselves ({which}); their "
                     f"profile stand-ins are {', '.join(stand_in) if stand_in else 'none'}. The profiler metrics in "
                     "this report describe those launches, not every timed one."
                     + (f" {', '.join(shape_label(s) for s in judged)} {'was' if len(judged) == 1 else 'were'} "
                        "profiled only for the steps judged there and their parents (their hypotheses' metrics)."
                        if judged else ""))
        head = data.headline()
        ps = data.profile_shape_for(head) if head else None
        if head and ps and ps != head:
            t.append(f"The ablation's profile columns come from {shape_label(ps)}, not the timed "
                     f"{shape_label(head)}.")
        # ncu duration against the timed cold median at the same shape
        devs = []
        for r in data.profile.itertuples():
            s = Shape.from_row(r)
            med = data.median(r.impl, s, "cold")
            if med and isnum(getattr(r, "duration_us", None)):
                devs.append((abs(r.duration_us / med - 1), r.impl, s, r.duration_us / med))
        passes = pd.to_numeric(data.profile.get("replay_passes"), errors="coerce").dropna() \
            if "replay_passes" in data.profile else pd.Series([], dtype=float)
        txt = ("Nsight Compute replays each profiled kernel"
               + ((f" {passes.min():.0f} times" if passes.min() == passes.max() else
                   f" {passes.min():.0f}–{passes.max():.0f} times") if len(passes) else "")
               + " to collect its counters, flushing caches between passes, and profiles a single launch; its "
               "durations are cold single-launch times under the profiler")
        if devs:
            worst = max(devs, key=lambda d: d[0])
            txt += (f". Against the timed cold medians at the same shapes the ncu durations differ by at most "
                    f"{worst[0] * 100:.1f} % ({worst[1]} at {shape_label(worst[2])}: ratio {worst[3]:.3f})")
        clock_ctl = _ncu_clock_control(data)
        if clock_ctl:
            txt += f"; ncu ran with `--clock-control {clock_ctl}`"
        t.append(txt + ".")
    else:
        t.append("No profiler data: the hypotheses cannot be checked against their mechanism, only their speed.")
    return t


def _ncu_clock_control(data: RunData) -> str | None:
    d = data.rec.path("ncu")
    if not d.is_dir():
        return None
    found = set()
    for log in sorted(d.glob("*.log")):
        m = re.search(r"--clock-control\s+(\S+)", log.read_text(errors="replace")[:4000])
        if m:
            found.add(m.group(1))
    return ", ".join(sorted(found)) if found else None
