"""The methodology section: timing, sampling and stopping, statistics, noise and precision, clocks
and cross-validation, Nsight Compute."""

from __future__ import annotations

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.measure.timing import recorded_flush
from lab.report.formats import KEYS, MISSING, PEER, XVAL_GAP, isnum, fmt, fmt_ratio, md_table, new_lines
from lab.report.context import Context
from lab.report.load import first_line
from lab.report.tables import (NCU_AGREE, NCU_XVAL_MIN_US, PRECISION_BAND, clock_range, calibration_summary,
                               capped_rows, clock_summary, crossval_table, gpu_of_replicates, gpu_split_table,
                               ncu_crossval_table, ncu_xval_table, noise_floor, precision_summary,
                               resumed_elsewhere, variance_split_table, wider_than)
from lab.studies.measure_shape import AA_SUFFIX
from lab.studies.params import RunParams


def block_sizes(rule) -> str:
    """The round robin's turn sizes: "9", or "3 (9 once a row has its minimum)" (MIN_BLOCKS above 2)."""
    after = getattr(rule, "block_after_minimum", None)
    text = str(rule.block)
    if after is not None and after != rule.block:
        text += f" ({after} once a row has its minimum)"
    turn_us = getattr(rule, "turn_us", None)
    if turn_us:  # StopRule.turn_us (COLD_TURN_US): runs before it had none
        text += (f", a cold block holding at most {turn_us:g} µs of GPU time (L2 flush and launch) and at least one "
                 "sample, so that launches of a millisecond and more are interleaved one sample at a time")
    hot_turn_us = getattr(rule, "hot_turn_us", None)
    if hot_turn_us:  # StopRule.hot_turn_us (HOT_TURN_US): runs before it had none
        text += (f", a hot block at most {hot_turn_us:g} µs of GPU time and at least one sample, so that a burst "
                 "of launches longer than a millisecond stays at the clock the GPU boosts to")
    return text


def cold_flush_words(flush: dict | None) -> str:
    """How the run's cold mode emptied the L2 before every launch (env.json's cold_flush, lab.measure.timing.L2Flusher;
    absent: the overwrite of the runs before it), with the probe's reading where recorded: a clause that follows
    "*cold*: " or "this run"."""
    if recorded_flush({"cold_flush": flush}) != "read":
        return ("overwrote a buffer of twice the L2 before every launch, which leaves up to the L2's size of dirty "
                "lines for the launch to write back beside its own traffic (later runs read the buffer instead)")
    text = "read a buffer of twice the L2 before every launch, which evicts the launch's data and leaves no dirty lines"
    if "flushed_read_us" in flush:
        text += (f" (a probe of {flush['probe_bytes'] / 1e6:.1f} MB, overwritten and then read, took "
                 f"{flush['l2_read_us']:.1f} µs from the L2 and {flush['flushed_read_us']:.1f} µs after the flush)")
    elif flush.get("error"):
        text += f" (its probe failed: {flush['error'][:200]})"
    return text


def _timing(ctx: Context) -> list[str]:
    data, env = ctx.data, ctx.data.env
    L, add = new_lines()
    summ = data.summary
    sets_txt = MISSING
    if summ is not None and "input_sets" in summ.columns:
        hot = summ[summ["mode"] == "hot"]
        if len(hot):
            per_shape = hot.groupby(KEYS, sort=False)["input_sets"].max()
            rot = [f"{Shape.from_row(dict(zip(KEYS, k))).tuple_label}: {int(v)}" for k, v in per_shape.items()]
            sets_txt = "; ".join(rot)
    l2 = env.get("l2_bytes")
    add("**Timing modes.** *hot*: back-to-back launches captured in one CUDA graph and replayed; a sample "
        "is one replay's CUDA-event time divided by its launches. Where one set of Q, K, V and O fits in L2"
        + (f" ({l2 / 2**20:.0f} MiB here)" if isnum(l2) else "")
        + ", the graph rotates through enough input sets to exceed twice the L2, so inputs are not simply "
        f"re-read from it (input sets per shape, from each row's stop record, stops.parquet: {sets_txt}). *cold*: the "
        "run " + cold_flush_words(env.get("cold_flush")) + "; a sample is one launch.")
    add("")
    return L


def _capped_summary(cap_rows: list, rel_ci) -> str:
    """The sentence's end after the time cap's count: how many of its rows are wider than the CI target."""
    if not cap_rows:
        return "."
    wide = wider_than(cap_rows, rel_ci)
    return (f"; {len(wide)} of the {len(cap_rows)} have a median CI half-width wider than the "
            f"±{fmt(rel_ci * 100 if isnum(rel_ci) else None, 1)} % target. The table below lists all "
            f"{len(cap_rows)}, the widest first.")


def _sampling(ctx: Context) -> list[str]:
    data, params = ctx.data, ctx.data.params
    L, add = new_lines()
    summ = data.summary
    counts = summ["stopped_by"].value_counts().to_dict() if summ is not None and "stopped_by" in summ else {}
    cap_rows = capped_rows(data)
    R = data.run_params.replicates
    rule = data.run_params.replicate_rule()  # one replicate: the run's own rule
    rel_ci = rule.rel_ci if isnum(params.get("rel_ci")) else None
    cap_s = rule.cap_s if isnum(params.get("cap_s")) else params.get("cap_s")
    guard = data.run_params.stop_guard  # (confidence, factor); (None, f): recorded before the guard
    seed = f"seed {params.get('seed', MISSING)} + shape index" + (" + 100000 × replicate" if R > 1 else "")
    add(f"**Sampling and stopping.** Every implementation at a shape is sampled in blocks of {block_sizes(rule)} in a "
        f"randomized round-robin ({seed}), so drifts hit all of them alike. "
        + (f"In each of the {R} replicates (below) a row" if R > 1 else "A row")
        + f" stops when the 95 % CI of its median is within ±{fmt(rel_ci * 100 if isnum(rel_ci) else None, 1)} % "
        f"of the median (at least {rule.min_samples} samples)"
        + (f" and its {fmt(guard[0] * 100, 0)} % CI within ±"
           f"{fmt(guard[1] * rel_ci * 100 if isnum(rel_ci) else None, 1)} % (a guard against a median "
           "that sits between two modes of a multimodal latency distribution)" if guard[0] is not None else "")
        + f", or after {fmt(cap_s, 1)} s of sampling. "
        f"Rows stopped by the CI rule: {counts.get('ci', 0)}; by the time cap: {counts.get('cap', 0)} "
        f"(of {0 if summ is None else len(summ)} rows)" + _capped_summary(cap_rows, rel_ci))
    add("")
    if cap_rows:
        add(md_table(["implementation", "shape", "mode", "samples", "median CI half-width (%)"],
                     [[c.impl, c.shape, c.mode, c.n, fmt(c.half_width * 100 if c.half_width is not None else None, 2)]
                      for c in cap_rows], "lllrr"))
        add("")
    interval = ("a 95 % interval over the replicates (below)" if R > 1 else
                "a 95 % normal interval from a bootstrap of the rounds (2000 resamples, seed 0)" if data.by_round else
                "a 95 % two-sample BCa bootstrap CI (2000 resamples, seed 0)")
    add("**Statistics** (`lab.measure.stats`, recomputed here from samples.parquet with throttled samples dropped). "
        + ("Each number is a median" if R == 1 else
           "Each number is a median over the replicates (the geometric mean of their medians)")
        + ("; a speedup compares two rows of one round robin round by round: for every round in which both were "
           "sampled, the ratio `median(other) / median(this)` of that round's samples, and the median of these "
           "over the rounds (`lab.measure.stats.round_log_ratios`; > 1: this is faster)" if data.by_round else
           ("; a speedup is a ratio of medians" if R == 1 else "; a speedup is a ratio of such medians")
           + ", `median(other) / median(this)` (> 1: this is faster)")
        + f", with {interval}. Effect size is Cliff's δ "
        "(negative: this step's latencies tend to be lower); the test is a two-sided Mann-Whitney U with "
        "Benjamini-Hochberg correction across the rows of a table. A difference is called *faster*/*slower* only "
        f"when the corrected p < 0.05 **and** the whole CI lies outside ±{stats.NOISE_BAND * 100:g} %; otherwise it "
        "is *within noise*.")
    add("")
    return L


def _replicates(ctx: Context) -> list[str]:
    """How many replicates, how the sample budget was shared out and why, what the intervals are,
    how the variance splits per shape; then the leave-one-replicate-out calibration."""
    data = ctx.data
    p = data.run_params
    R = data.replicates
    if R == 1:
        L = ["**Replicates.** This run measured one replicate: every sample of a row comes from one process, "
             "so its intervals hold the variance within that process only, not the variance between processes "
             "(inputs, memory placement, clock state), which a second run of the same kernels shows. Runs taken "
             f"with `REPLICATES` ≥ 2 (the default is {RunParams().replicates}) measure each row in several "
             "processes and widen the intervals by what they disagree (`lab.measure.stats.replicated_speedup_ci`).",
             ""]
        return L + _calibration(ctx)
    rule = p.replicate_rule()
    log = (data.replicate_log or {}).get("timing", {})
    runs = log.get("runs", [])
    took = "; ".join(f"replicate {r['replicate'] + 1}: {fmt(r.get('seconds'), 0)} s (start-up "
                     f"{fmt(r.get('startup_s'), 1)} s)" for r in runs)
    L = [f"**Replicates.** The timing was measured in {R} replicates, each a separate process "
         + (_where_replicates_ran(data) or "run after the previous one on this GPU")
         + ": a fresh CUDA context, allocations and inputs (torch seeded with the run's seed + "
         "100000 × replicate), its own interleaving order, the cached kernel builds loaded, never rebuilt"
         + (f" ({took})" if took else "") + "." + _moved(log) + " The run's sample budget was shared out, not "
         "multiplied: each "
         f"replicate stopped a row at ±{fmt(rule.rel_ci * 100, 2)} % (±{fmt(p.rel_ci * 100, 1)} % × √{R}, so "
         f"that the mean of {R} replicates has about the run's ±{fmt(p.rel_ci * 100, 1)} % of sampling error), "
         f"after at least {rule.min_samples} samples (⌈{p.min_samples} / {R}⌉) in blocks of {block_sizes(rule)}, or after "
         f"{fmt(rule.cap_s, 2)} s ({fmt(p.cap_s, 1)} s / {R}). Why: a process's samples share its inputs, "
         "placement and clock state, so sampling more within one process narrows an interval without making it "
         "hold when the study is run again; the variance between processes is only measured, and averaged down, "
         "by more processes (Kalibera and Jones, *Rigorous Benchmarking in Reasonable Time*, ISMM 2013). Each "
         "replicate's CI test is its own: on the pooled samples it would keep sampling to shrink a difference "
         "between replicates that samples within them cannot shrink.",
         "",
         f"A speedup is the geometric mean of the {R} replicates' own "
         + ("round-paired ratios (each the median over its rounds, above)" if data.by_round else "ratios of medians")
         + ". Its 95 % interval is a t interval over the replicates on the log scale: the variance is the larger "
         f"of the replicates' spread (S² / {R}, {R - 1} degrees of freedom) and what sampling within them explains "
         + ("(a bootstrap of each replicate's rounds)" if data.by_round
            else "(a bootstrap of each replicate's samples)")
         + ", with Satterthwaite's degrees of freedom between the two "
         "(`lab.measure.stats.replicated_speedup_ci`). With few replicates the t quantile is large: the price of "
         "an interval that includes the variance between processes.",
         ""]
    if data.by_round:
        L += [_round_pairing(data), ""]
    split = variance_split_table(data)
    if split:
        L += ["How the variance of a median splits, per shape (over its implementations and modes; "
              "`lab.measure.stats.variance_split`): *between* is the SD of the replicates' medians beyond what "
              "their sampling explains, *within* the sampling SD of one replicate's median, both in % of the "
              "median; the share is between / (between + within) in variance.", "",
              md_table(["shape", "rows", "between SD % (median)", "within SD % (median)", "between share (median)",
                        "rows where between > within"], split, "lrrrrr"), ""]
    by_gpu = gpu_split_table(data)
    if by_gpu:
        L += ["How the replicates' medians split between GPUs (`lab.measure.stats.gpu_split`, a one-way analysis of "
              "variance of each row's replicate log medians by GPU): *between GPUs* is the SD of the GPUs' means "
              "beyond what the spread on one GPU explains, *between processes* the SD between replicates on one GPU, "
              "both in % of the median. Every speedup above compares two rows within each replicate, and so on "
              "one GPU.", "",
              md_table(["shape", "rows", "between GPUs SD % (median)", "between processes SD % (median)",
                        "rows where GPUs > processes"], by_gpu, "lrrrr"), ""]
    return L + _calibration(ctx)


def _moved(log: dict) -> str:
    """' Replicate 2 failed on GPU 1 (exit code 1) and ran again on another GPU ...' for the replicates a
    run side by side handed to another GPU (lab.studies.replicates: the plan's `moved`); "" where none."""
    moved = log.get("moved") or []
    if not moved:
        return ""
    each = "; ".join(f"replicate {m['replicate'] + 1} failed on GPU {m.get('gpu') or '?'} (exit code "
                     f"{m.get('exit_code')})" for m in moved)
    return (f" {each}: {'it' if len(moved) == 1 else 'each'} ran again on another GPU of the pool, and the samples "
            "of the failed attempt are kept aside, not merged (the plan's interrupted/ folder).")


def _where_replicates_ran(data) -> str:
    """'side by side on N GPUs (...)' where the replicates name two GPUs or more; 'one after another on N GPUs
    (...)' where they do because the run was resumed on another machine (tables.resumed_elsewhere); "" otherwise."""
    gpu_of = gpu_of_replicates(data)
    if not gpu_of:
        return ""
    gpus = data.replicate_gpus
    names = sorted({gpus[i].get("gpu_name") or "?" for i in gpu_of})
    by = {}
    for i, g in sorted(gpu_of.items()):
        by.setdefault(g, []).append(i + 1)
    resumed = resumed_elsewhere(data)

    def gpu(reps):  # a resumed run's machines each number their one GPU 0: the UUID tells them apart
        g = gpus[reps[0] - 1]
        return (g.get("gpu_uuid") or "?") if resumed else f"GPU {g.get('gpu_index', '?')}"

    where = "; ".join(f"{gpu(reps)}: replicate{'s' if len(reps) > 1 else ''} " + ", ".join(map(str, reps))
                      for reps in by.values())
    if resumed:
        return (f"one after another on {len(by)} GPUs, the run resumed on a second machine (resumes.json; "
                f"{', '.join(names)}; {where})")
    return f"side by side on {len(by)} GPUs ({', '.join(names)}; {where}), one a GPU at a time"


def largest_clock_drift(samples, min_rows: int = 2, min_rounds: int = stats.MIN_ROUNDS) -> dict | None:
    """Where a run's clock drifted most inside one round robin: over every (shape, mode, replicate)
    with at least `min_rounds` rounds between its first and last and at least `min_rows` rows sampled
    in both, the one whose mean SM clock fell most from the first round to the last. Returns its
    shape, mode and replicate, both clocks (MHz), the rounds apart, the rows, and `slower`: the median
    over those rows of last-round median / first-round median, minus 1; None where no group qualifies
    (runs without rounds or clocks)."""
    import numpy as np

    cols = {"round", "sm_clock_mhz", "impl", "latency_us", "mode", "replicate", *KEYS}
    if samples is None or not len(samples) or not cols <= set(samples.columns):
        return None
    s = samples[samples["round"].notna() & samples["sm_clock_mhz"].notna()]
    best = None
    for key, g in s.groupby([*KEYS, "mode", "replicate"], sort=False):
        first_round, last_round = g["round"].min(), g["round"].max()
        if last_round - first_round < min_rounds:
            continue
        first, last = g[g["round"] == first_round], g[g["round"] == last_round]
        rows = sorted(set(first["impl"]) & set(last["impl"]))
        if len(rows) < min_rows:
            continue
        c0, c1 = float(first["sm_clock_mhz"].mean()), float(last["sm_clock_mhz"].mean())
        if best is None or c0 - c1 > best["first_mhz"] - best["last_mhz"]:
            ratios = [last.loc[last["impl"] == i, "latency_us"].median() / first.loc[first["impl"] == i, "latency_us"].median()
                      for i in rows]
            row = dict(zip([*KEYS, "mode", "replicate"], key))
            best = {"shape": Shape.from_row(row), "mode": row["mode"], "replicate": int(row["replicate"]),
                    "first_mhz": c0, "last_mhz": c1, "rounds": int(last_round - first_round), "rows": len(rows),
                    "slower": float(np.median(ratios)) - 1.0}
    return best


def _round_pairing(data) -> str:
    """Why speedups compare rows round by round, where the run recorded rounds; the drift it guards
    against, from this run's own samples where they show one (largest_clock_drift)."""
    d = largest_clock_drift(data.samples)
    if d is not None and d["first_mhz"] > d["last_mhz"]:
        drift = (f"in this run, at {d['shape']} {d['mode']} (replicate {d['replicate']}), the mean SM clock "
                 f"fell from {d['first_mhz']:.0f} MHz in the round robin's first round to {d['last_mhz']:.0f} "
                 f"MHz in its last, {d['rounds']} rounds later, and the {d['rows']} rows sampled in both were "
                 f"{100 * abs(d['slower']):.1f} % {'slower' if d['slower'] >= 0 else 'faster'} in the last "
                 "(median over them; a study of it on an H100: "
                 "`data/explorations/2026-11-26-cold-drift/`)")
    else:
        drift = ("on an H100 at the heaviest models shapes the rows still sampling late took their late samples "
                 "at lower clocks (`data/explorations/2026-11-26-cold-drift/`)")
    return ("**Why round by round.** Every sample records the round of the round robin it was taken in. A "
            f"process's clock state drifts: {drift}. So two rows that stopped at different rounds have "
            "medians from different states, and their ratio moves with a sample more or less. Compared within "
            "each round, both rows are in the same state. Rows that share fewer than "
            f"{stats.MIN_ROUNDS} rounds in some replicate, and rows of different round robins (a bf16 shape "
            "against its fp16 twin; two runs), are compared by their medians. The latency tables keep the "
            "medians; the models section names each of its speedups that differs from the ratio of two of "
            "them by more than 1 %.")


def _calibration(ctx: Context) -> list[str]:
    cal = calibration_summary(ctx.data)
    if not cal.get("applicable"):
        return [f"**Calibration (leave one replicate out).** Not possible here: {cal.get('reason', MISSING)}.", ""]
    return [f"**Calibration (leave one replicate out).** For each of the {cal['ratios']} step-vs-parent ratios "
            "(every ladder shape and mode) each replicate was left out in turn. The 95 % interval from the other "
            f"{cal['replicates'] - 1} replicates covered the left-out replicate's own ratio at "
            f"{fmt(cal['covered'] * 100, 1)} % of the {cal['points']} points; calibrated intervals would cover about "
            f"{fmt(cal['expected_covered'] * 100, 1)} % (an interval for the mean is narrower than the spread of "
            "one more replicate: `lab.measure.stats.leave_one_out`). The prediction interval for one replicate "
            f"that the same model implies covered {fmt(cal['pred_covered'] * 100, 1)} % (nominal 95 %)."
            + (f" Points and intervals compared round by round: {fmt(cal['by_round'] * 100, 1)} % of the points."
               if "by_round" in cal else "") + f" Per point: `python -m lab.studies.calibration {ctx.data.run_id} --rows`.", ""]


def _noise_and_precision(ctx: Context) -> list[str]:
    data = ctx.data
    L, add = new_lines()
    nf = noise_floor(data)
    if len(nf):
        dev = (nf["ratio"] - 1).abs().max() * 100
        add(f"**Noise floor.** One step is timed twice in the same interleave (`{nf['impl'].iloc[0]}` vs "
            f"`{nf['base'].iloc[0]}`). Over {len(nf)} shape×mode rows its A/A speedup ranges "
            f"{fmt_ratio(nf['ratio'].min())}× to {fmt_ratio(nf['ratio'].max())}× (largest deviation from 1: "
            f"{dev:.2f} %), with CIs from {fmt_ratio(nf['lo'].min())} to {fmt_ratio(nf['hi'].max())}; "
            f"{int((nf['verdict'] != 'within noise').sum())} of {len(nf)} rows are called significant, and "
            f"{int(((nf['lo'] <= 1) & (nf['hi'] >= 1)).sum())} of {len(nf)} intervals contain 1.0 (calibrated 95 % "
            "intervals: about 95 %). Per-row values are in the noise-floor table below.")
    else:
        add("**Noise floor.** No A/A twin (`<impl>" + AA_SUFFIX + "`) was measured in this run: the noise floor "
            "is not known.")
    add("")
    prec = precision_summary(data)
    if prec["total"]:
        wider = "; ".join(f"{w['impl']} at {w['shape']} {w['mode']} (±{w['half_pct']:.2f} %, n={w['n']}, "
                          f"stopped by {w['stopped_by']}; {w['near_median_pct']:.0f} % of its samples within "
                          "±0.5 % of its median)" for w in prec["wider"])
        add(f"**Precision.** Speedup intervals against {PEER} at the canonical shapes: {prec['within']} of "
            f"{prec['total']} lie within ±{PRECISION_BAND * 100:.0f} % of their ratio"
            + (f"; wider: {wider}. Few samples near the median and a wide interval after thousands of samples mark "
               "a multimodal latency distribution whose median falls between two modes; more samples do not "
               "narrow such a median." if wider else "."))
        add("")
    return L


def _clocks_and_crossval(ctx: Context) -> list[str]:
    data, env = ctx.data, ctx.data.env
    L, add = new_lines()
    clk = clock_summary(data)
    if clk["n"]:
        clock_txt = (f"SM clock read through NVML at every block of samples: {clock_range(clk)} (median "
                     f"{fmt(clk['clock_median'], 0)} MHz; the GPU's maximum is "
                     f"{env.get('sm_clock_max_mhz', MISSING)} MHz)" if clk["clock_min"] is not None
                     else "No SM clock readings were recorded (NVML missing)")
        add(f"**Clocks.** {clock_txt}. Burst (hot and cold) samples taken during a thermal or hardware slowdown, "
            f"and sustained samples whose turn ended in a hardware slowdown, are flagged and dropped: "
            f"{clk['throttled']} of {clk['n']} ({clk['throttled'] / clk['n'] * 100:.2f} %). The power cap "
            f"({env.get('power_limit_w', MISSING)} W) is not counted as throttling, nor, in the sustained mode, the "
            f"driver's thermal slowdown: both are the sustained load's own state"
            + (f" ({clk['sustained_thermal']} of the {clk['sustained']} sustained samples ran under it)"
               if clk.get("sustained") else "") + ". Clocks are not locked.")
    else:
        add("**Clocks.** No samples, so no clock readings.")
    add("")
    xrows, xgaps = crossval_table(data)
    if xrows:
        ratios = [c["ratio"] for c in data.crossval if isnum(c.get("ratio"))]
        add(f"**Cross-validation.** {PEER}'s hot median from this harness against "
            "`triton.testing.do_bench_cudagraph` on one input set, per shape: harness/triton ratios "
            + (f"{min(ratios):.3f} to {max(ratios):.3f}" if ratios else MISSING)
            + (f"; {len(xgaps)} shape(s) differ by more than {XVAL_GAP * 100:.0f} % (see threats)."
               if xgaps else f"; all within {XVAL_GAP * 100:.0f} %."))
        add("")
        add(md_table(["shape", "impl", "harness µs", "triton µs", "ratio"], xrows, "llrrr"))
    else:
        add("**Cross-validation.** crossval.json is missing or empty: the harness was not checked against triton.")
    add("")
    return L


def _ncu_xval(data) -> list[str]:
    """The cross-checked peer's hot medians against Nsight Compute (ncu_xval.json, lab.measure.ncu_xval)."""
    L, add = new_lines()
    x = data.ncu_xval
    rows, ratios = ncu_xval_table(data)
    errors = "; ".join(f"{m}: {first_line(w)}" for m, w in (x.get("errors") or {}).items())
    if not rows:
        add(f"**Nsight Compute against the hot medians.** Not available for this run ({errors or 'no rows'}).")
        add("")
        return L
    within = sum(abs(r - 1) <= NCU_AGREE for r in ratios)
    add(f"**Nsight Compute against the hot medians.** At every shape where {x['impl']}'s hot median is "
        f"{NCU_XVAL_MIN_US:.0f} µs or more, Nsight Compute timed the same launches as the hot mode launches them "
        "(`lab.measure.ncu_xval`, clocks and caches left alone): where a hot block holds several launches, graphs "
        "of 1, 2, 4 and 8 times that many, each profiled as one workload, and the Theil-Sen slope of their "
        "durations over their launches (ncu's own cost of a graph, a few hundred µs, cancels); where it holds "
        f"one, lone launches. Hot / ncu: {min(ratios):.3f} to {max(ratios):.3f}; within "
        f"{NCU_AGREE * 100:.0f} % at **{within} of {len(ratios)}** shapes."
        + (f" Not profiled: {errors}." if errors else ""))
    add("")
    add(md_table(["shape", "ncu launched", "hot median µs", "ncu per launch µs", "hot / ncu"], rows, "llrrr"))
    add("")
    return L


def _ncu_and_profiling(ctx: Context) -> list[str]:
    data = ctx.data
    L, add = new_lines()
    nrows = [] if data.ncu_xval is not None else ncu_crossval_table(data)  # the check it replaced, in older runs
    if data.ncu_xval is not None:
        L += _ncu_xval(data)
    if nrows:
        long_ = [float(r[-1]) for r in nrows if float(r[3]) >= NCU_XVAL_MIN_US]
        short = [float(r[-1]) for r in nrows if float(r[3]) < NCU_XVAL_MIN_US]
        span = lambda xs: f"{min(xs):.3f} to {max(xs):.3f}" if xs else MISSING  # noqa: E731
        add(f"Against Nsight Compute's `gpu__time_duration` of the same SDPA kernels (one launch, clocks not "
            f"controlled), the harness's hot medians (rotating input sets) give ratios {span(long_)} where the "
            f"kernel runs at least {NCU_XVAL_MIN_US:.0f} µs ({len(long_)} pairs). Below that ({len(short)} pairs: "
            f"{span(short)}) the two measure different things: ncu one isolated launch, the hot mode a launch's "
            "share of a back-to-back graph replay, gaps between launches and any other kernel the call launches "
            "included; those rows are listed, not counted as cross-validation.")
        add("")
        add(md_table(["shape", "impl", "harness hot median µs", "ncu duration µs", "ratio"], nrows, "llrrr"))
        add("")
    which = ("at every timed shape; each table says which shape its profile columns come from."
             if ctx.data.run_params.profile_shapes == "all" else
             "for each distinct (S, D), non-causal where there is one (`lab.studies.profiling.one_per_s_and_d`). "
             "Profile columns therefore come from the profiled shape with the ablation's S and D, which may have "
             "different B and H than the timed shape; each table says which.")
    add("**Profiling.** Nsight Compute (`ncu --page raw`, caches flushed between replay passes) over one launch "
        "per implementation " + which)
    add("")
    return L


def section_methodology(ctx: Context) -> list[str]:
    """How the run measured: timing modes, sampling, statistics, noise floor, precision, clocks,
    cross-validation and profiling, each paragraph from its own helper."""
    return ["## Methodology", ""] + [ln for part in (_timing, _sampling, _replicates, _noise_and_precision,
                                                 _clocks_and_crossval, _ncu_and_profiling) for ln in part(ctx)]
