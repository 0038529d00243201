"""Does it replicate? Two runs of the study side by side (another GPU, or the same GPU again):
every step against its parent, every knock-out and every row of the bar, the effect in each run
with its 95 % interval, and whether the verdict holds in both; then, over every step-vs-parent
ratio of every ladder shape and mode, how often one run's point falls inside the other's interval.

    python -m lab replicate RUN BASE          # make replicate RUN=<a> BASE=<b>: the rows, printed
    rows(run_a, run_b)                        # the same as a DataFrame
    section(data_a, data_b)                   # the report's "Does it replicate?" section

From the two run folders alone. Verdicts are each run's own: a step's is the ablation's (its
Benjamini-Hochberg p and interval against the noise band), a knock-out's and a ratio's its
interval against the noise band (lab.measure.stats.interval_verdict), a bar row's its level
against the bar (lab.report.bar). Across GPUs an effect may differ for good reasons (another memory
system, another SM count); the verdict is what the study claims, and what should hold.
"""

from __future__ import annotations

import math

import pandas as pd

from lab.measure import records, stats
from lab.measure.timing import recorded_flush
from lab.report import bar, knockouts
from lab.report.formats import MISSING, fmt, fmt_ci, md_table, shape_label
from lab.report.load import RunData, run_data
from lab.report.tables import ablation_frame, hypothesis_rows
from lab.studies.calibration import step_pairs

COLUMNS = ["kind", "what", "shape", "mode", "a", "a_lo", "a_hi", "a_verdict", "b", "b_lo", "b_hi", "b_verdict",
           "holds", "same_code"]
KNOCKOUT_VERDICTS = {"faster": "helps", "slower": "hurts", "within noise": "within noise"}


def _same_code(a: RunData, b: RunData, *impls: str) -> str:
    """'yes' where every impl's source hash (build.json) is the same in both runs, 'no' where one
    differs, '—' where a run did not record it."""
    hashes = [((a.build.get(i) or {}).get("source_hash"), (b.build.get(i) or {}).get("source_hash")) for i in impls]
    if any(x is None or y is None for x, y in hashes):
        return MISSING
    return "yes" if all(x == y for x, y in hashes) else "no"


def _step_rows(a: RunData, b: RunData) -> list[dict]:
    """Each step against its parent where the report judges it (the headline shape, or the step's
    judged_at shape), hot: the ablation's ratio, interval and speed verdict in each run."""
    tabs = []
    for data in (a, b):
        head = data.headline()
        tabs.append(hypothesis_rows(data, ablation_frame(data, head, "hot")).set_index("variant") if head else None)
    if tabs[0] is None or tabs[1] is None:
        return []
    out = []
    for name, r in tabs[0].iterrows():
        if name not in tabs[1].index or not r["parent"]:
            continue
        s = tabs[1].loc[name]
        if r["vs_parent"] is None or s["vs_parent"] is None or pd.isna(r["vs_parent"]) or pd.isna(s["vs_parent"]):
            continue
        shape = r["judged_at"] or r["shape"]
        if (s["judged_at"] or s["shape"]) != shape:
            continue
        out.append(dict(kind="step", what=f"{name} vs {r['parent']}", shape=shape, mode="hot",
                        a=r["vs_parent"], a_lo=r["vs_parent_lo"], a_hi=r["vs_parent_hi"], a_verdict=r["speed_verdict"],
                        b=s["vs_parent"], b_lo=s["vs_parent_lo"], b_hi=s["vs_parent_hi"], b_verdict=s["speed_verdict"],
                        same_code=_same_code(a, b, name, r["parent"])))
    return out


def _knockout_rows(a: RunData, b: RunData) -> list[dict]:
    """Each knock-out's cost (the last step against it without the optimization) where the report
    shows it (knockouts.primary)."""
    tabs = []
    for data in (a, b):
        try:
            tab = knockouts.table(data.rec.dir)
        except (FileNotFoundError, KeyError):
            return []
        tabs.append(knockouts.primary(tab).dropna(subset=["cost"]).set_index(["switch", "shape"]) if len(tab) else None)
    if tabs[0] is None or tabs[1] is None:
        return []
    out = []
    for (switch, shape), r in tabs[0].iterrows():
        if (switch, shape) not in tabs[1].index:
            continue
        s = tabs[1].loc[(switch, shape)]
        verdict = [KNOCKOUT_VERDICTS[stats.interval_verdict(x["cost_lo"], x["cost_hi"])] for x in (r, s)]
        out.append(dict(kind="knock-out", what=f"{switch} in {r['kernel']}", shape=shape, mode="hot",
                        a=r["cost"], a_lo=r["cost_lo"], a_hi=r["cost_hi"], a_verdict=verdict[0],
                        b=s["cost"], b_lo=s["cost_lo"], b_hi=s["cost_hi"], b_verdict=verdict[1],
                        same_code=_same_code(a, b, r["kernel"])))
    return out


def _bar_rows(a: RunData, b: RunData) -> list[dict]:
    """Each row of the bar: each run's best step against its fastest SDPA backend, the row's level."""
    tabs, best = [], []
    for data in (a, b):
        step = bar.bar_step(data)
        best.append(step)
        rows = bar.bar_rows(data, step) if step else pd.DataFrame()
        tabs.append(rows.set_index(["shape", "mode"]) if len(rows) else None)
    if tabs[0] is None or tabs[1] is None:
        return []
    what = best[0] if best[0] == best[1] else f"{best[0]} / {best[1]}"
    out = []
    for (shape, mode), r in tabs[0].iterrows():
        if (shape, mode) not in tabs[1].index:
            continue
        s = tabs[1].loc[(shape, mode)]
        out.append(dict(kind="bar", what=f"{what} vs {r['fastest']}" + (f" / {s['fastest']}" if s["fastest"] !=
                                                                          r["fastest"] else ""),
                        shape=shape_label(shape) + ("" if mode == "hot" else f", {mode}"), mode=mode, a=r["ratio"], a_lo=r["lo"], a_hi=r["hi"],
                        a_verdict=bar.row_level(r), b=s["ratio"], b_lo=s["lo"], b_hi=s["hi"],
                        b_verdict=bar.row_level(s), same_code=_same_code(a, b, best[0]) if best[0] == best[1]
                        else "no"))
    return out


def rows(run_a, run_b) -> pd.DataFrame:
    """Every step, knock-out and bar row measured in both runs: effect, interval and verdict in each,
    `holds` where the verdicts agree, `same_code` where the kernels' sources hash alike."""
    a, b = run_data(run_a), run_data(run_b)
    out = _step_rows(a, b) + _knockout_rows(a, b) + _bar_rows(a, b)
    for r in out:
        r["holds"] = r["a_verdict"] == r["b_verdict"]
    return pd.DataFrame(out, columns=COLUMNS)


def _se(ci: stats.SpeedupCI) -> float:
    """The SE of log(ratio): recorded by the replicated interval, else read off the interval's width."""
    if ci.se_log is not None:
        return ci.se_log
    return math.log(ci.hi / ci.lo) / (2 * 1.959964) if ci.lo > 0 else math.nan


def agreement(run_a, run_b) -> dict:
    """Over every step-vs-parent ratio at every ladder shape and mode measured in both runs: how
    often each run's point lies inside the other's interval, |z| < 1.96 for their difference, and
    the ratios whose verdict against the noise band differs. `expected_inside` is what calibrated
    intervals of equal width give: P(|Z| < 1.96 / sqrt(2)) (two estimates' difference has sqrt(2)
    times one's SD)."""
    a, b = run_data(run_a), run_data(run_b)
    shapes = [s for s, scope in a.run_params.scopes.items() if scope == "ladder" and s in set(b.measured_shapes)]
    pairs = [p for p in step_pairs(a.variants) if p in set(step_pairs(b.variants))]
    n = a_in_b = b_in_a = z_ok = 0
    differ = []
    for shape in shapes:
        for mode in [m for m in a.modes if m in b.modes]:
            for step, parent in pairs:
                ca, cb = a.speedup(step, parent, shape, mode), b.speedup(step, parent, shape, mode)
                if ca is None or cb is None:
                    continue
                n += 1
                a_in_b += cb.lo <= ca.ratio <= cb.hi
                b_in_a += ca.lo <= cb.ratio <= ca.hi
                z = (math.log(ca.ratio) - math.log(cb.ratio)) / math.hypot(_se(ca), _se(cb))
                z_ok += abs(z) < 1.959964
                va, vb = stats.interval_verdict(ca.lo, ca.hi), stats.interval_verdict(cb.lo, cb.hi)
                if va != vb:
                    differ.append(dict(step=step, parent=parent, shape=shape_label(shape), mode=mode,
                                       a=fmt_ci(ca.ratio, ca.lo, ca.hi), a_verdict=va,
                                       b=fmt_ci(cb.ratio, cb.lo, cb.hi), b_verdict=vb))
    expected = float(2 * _normal_cdf(1.959964 / math.sqrt(2)) - 1)
    return {"ratios": n, "a_in_b": a_in_b / n if n else math.nan, "b_in_a": b_in_a / n if n else math.nan,
            "z_within": z_ok / n if n else math.nan, "expected_inside": expected, "differ": differ,
            "replicates": (a.replicates, b.replicates)}


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _who(data: RunData) -> str:
    return f"{data.run_id} ({data.env.get('gpu', 'unknown GPU')}, {data.replicates} replicate" \
           f"{'' if data.replicates == 1 else 's'})"


def _table(tab: pd.DataFrame) -> str:
    out = [[r.kind, r.what, r.shape, fmt_ci(r.a, r.a_lo, r.a_hi), r.a_verdict, fmt_ci(r.b, r.b_lo, r.b_hi),
            r.b_verdict, "yes" if r.holds else "**no**", r.same_code] for r in tab.itertuples()]
    return md_table(["kind", "what", "shape (hot unless said)", "A [95 % CI]", "A's verdict", "B [95 % CI]",
                     "B's verdict", "holds", "same code"], out, "lllrlrlll", compact=True)


def _agreement_text(agr: dict) -> str:
    if not agr["ratios"]:
        return "No step-vs-parent ratio was measured in both runs at a common ladder shape."
    differ = "; ".join(f"{d['step']} at {d['shape']} {d['mode']}: {d['a']} ({d['a_verdict']}) against {d['b']} "
                       f"({d['b_verdict']})" for d in agr["differ"][:10])
    more = f" and {len(agr['differ']) - 10} more" if len(agr["differ"]) > 10 else ""
    band = f"±{stats.NOISE_BAND * 100:g} %"  # the band the verdicts compared here are judged against
    return (f"Over all {agr['ratios']} step-vs-parent ratios measured in both runs (every ladder shape and mode): "
            f"A's point lies inside B's 95 % interval for {fmt(agr['a_in_b'] * 100, 1)} % of them, B's inside A's "
            f"for {fmt(agr['b_in_a'] * 100, 1)} %, and the two differ by less than 1.96 standard errors for "
            f"{fmt(agr['z_within'] * 100, 1)} %; calibrated intervals of equal width would put about "
            f"{fmt(agr['expected_inside'] * 100, 0)} % of the other run's points inside (the difference of two "
            "estimates has √2 times the SD of one) and 95 % within 1.96 standard errors. "
            + (f"{len(agr['differ'])} verdicts against the {band} noise band differ: {differ}{more}."
               if agr["differ"] else f"Every verdict against the {band} noise band is the same in both."))


def flush_note(a: RunData, b: RunData) -> str:
    """A line where the two runs emptied the L2 differently before their cold samples (lab.measure.timing.L2Flusher;
    env.json's cold_flush), else ""."""
    fa, fb = recorded_flush(a.env), recorded_flush(b.env)
    if fa == fb:
        return ""
    words = {"read": "read a buffer of twice the L2",
             "write": "overwrote one, leaving dirty lines the timed call wrote back "
                      "(data/explorations/2026-12-04-cold-flush-writeback)"}
    return (f"The two runs emptied the L2 differently before each cold sample (A {words[fa]}; B {words[fb]}): a cold "
            "row that differs between them may differ for that.")


def section(run_a, run_b) -> list[str]:
    """The report's "Does it replicate?" section: run_a is the report's run, run_b the other."""
    a, b = run_data(run_a), run_data(run_b)
    tab = rows(a, b)
    held = int(tab["holds"].sum()) if len(tab) else 0
    out = ["## Does it replicate?", "",
           f"This run (A: {_who(a)}) against another (B: {_who(b)}): every step against its parent where the "
           "ablation judges it, every knock-out's cost and every row of the bar, each run's effect with its 95 % "
           "interval and verdict (`python -m lab replicate` prints the same; `lab.report.replication`). Across GPUs "
           "an effect may differ for good reasons; a verdict that holds on both is one the study can claim.", ""]
    if not len(tab):
        return out + ["The two runs have no step, knock-out or bar row in common.", ""]
    broken = tab[~tab["holds"]]
    out += [f"**{held} of {len(tab)} verdicts hold on both**"
            + (": " + "; ".join(f"{r.kind} {r.what} at {r.shape} ({r.a_verdict} in A, {r.b_verdict} in B)"
                                for r in broken.itertuples()) + " do not." if len(broken) else "."), "",
            _table(tab), "", _agreement_text(agreement(a, b)), ""]
    if note := flush_note(a, b):
        out += [note, ""]
    return out


def other_gpu_run(data: RunData) -> str | None:
    """The latest complete run beside `data`'s (same runs folder) on another GPU model, or None."""
    root = data.rec.dir.parent
    gpu = data.env.get("gpu")
    for run_id in reversed(records.list_runs(root)):
        if run_id == data.run_id:
            continue
        rec = records.RunRecord.open(run_id, root)
        if rec.status.get("state") != "complete" or not rec.has("samples.parquet") or not rec.has("env.json"):
            continue
        other = rec.read_json("env.json").get("gpu")
        if gpu and other and other != gpu:
            return run_id
    return None


def main(run_a: str, run_b: str, progress=print, root=None) -> int:
    """`python -m lab replicate RUN BASE`: every row, then the agreement over every ratio."""
    a, b = RunData(records.RunRecord.open(run_a, root)), RunData(records.RunRecord.open(run_b, root))
    tab = rows(a, b)
    progress(f"A: {_who(a)}\nB: {_who(b)}\n(ratio > 1: the step, the optimization or the best step is faster)")
    for r in tab.itertuples():
        progress(f"  {r.kind:<9} {r.what:<40} {r.shape:<32} A {fmt_ci(r.a, r.a_lo, r.a_hi, mark='x'):<26} "
                 f"{r.a_verdict:<13} B {fmt_ci(r.b, r.b_lo, r.b_hi, mark='x'):<26} {r.b_verdict:<13} "
                 f"{'holds' if r.holds else 'DIFFERS'}" + ("" if r.same_code in ("yes", MISSING) else " (code differs)"))
    progress(f"{int(tab['holds'].sum()) if len(tab) else 0} of {len(tab)} verdicts hold in both runs")
    progress(_agreement_text(agreement(a, b)))
    if note := flush_note(a, b):
        progress(note)
    return 0

