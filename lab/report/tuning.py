"""The tuning section of the report, from a tuning run folder alone (data/tuning/<run_id>/).

    python -m lab.report.tuning [RUN_ID]    # writes reports/tuning/<run_id>/tuning.md and trials.png

`section(run_dir)` returns the Markdown: the search (size, sampler, workers, wall time; one
against several GPUs where sibling runs of the same search with another worker count exist), the
leaderboard (top configurations per shape class: geometric-mean speedup over the default with its
95 % interval), the dispatch table that was chosen, the held-out table (speedup of the tuned
dispatch over the default with 95 % intervals; a class whose configuration wins on its tuning
shapes but on none of its held-out shapes is flagged as overfitted), and the A/A spread within
and across GPUs; then any later search of the same step whose table was not committed, with what its
held-out check kept. `figure(run_dir, path)` plots every trial's speedup against its trial number,
one panel per head dim, coloured by the GPU that measured it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lab.kernels.manifest import REPO
from lab.kernels.shape import Shape
from lab.report.formats import fmt_ci, md_table
from lab.studies.tuning.dispatch import heldout_verdict as verdict, heldout_verdicts  # noqa: F401 (the report's names)

REPORT_DIR = REPO / "reports" / "tuning"
TOP = 5


def read_run_file(run_dir: Path, name: str):
    """A tuning run's file: a parquet as a DataFrame (empty where absent), a JSON file parsed (an empty frame where absent)."""
    import pandas as pd

    path = Path(run_dir) / name
    if not path.exists():
        return pd.DataFrame()
    return pd.read_parquet(path) if name.endswith(".parquet") else json.loads(path.read_text())


def _md(headers: list, rows: list) -> str:
    """The section's tables: floats to three decimals (lab.report.formats.md_table, compact rule)."""
    return md_table(headers, [[f"{x:.3f}" if isinstance(x, float) else x for x in r] for r in rows], compact=True)


def _ci(r, lo, hi) -> str:
    return fmt_ci(r, lo, hi, mark="")


# --- pieces ---------------------------------------------------------------------------------


def leaderboard(tuning, top: int = TOP, mode: str = "hot"):
    """Top configurations per shape class (lab.studies.tuning.dispatch.class_scores), best first."""
    from lab.studies.tuning.dispatch import class_scores

    scores = class_scores(tuning, mode)
    return scores.groupby("shape_class", group_keys=False).head(top)


def outcomes(tuning) -> dict[str, int]:
    """Trials per outcome (a trial's outcome: its first row that is not ok, else ok), sorted by name."""
    if tuning.empty:
        return {}
    per_trial = {}
    for t, g in tuning.groupby("trial"):
        bad = g[g["status"] != "ok"]
        per_trial[t] = bad["status"].iloc[0] if not bad.empty else "ok"
    return {k: list(per_trial.values()).count(k) for k in sorted(set(per_trial.values()))}


def search_summary(run_dir: Path) -> list[str]:
    params, wall, status = read_run_file(run_dir, "params.json"), read_run_file(run_dir, "wall.json"), read_run_file(run_dir, "status.json")
    counts = outcomes(read_run_file(run_dir, "tuning.parquet"))
    lines = [f"Run `{Path(run_dir).name}` ({status.get('state', '?')}): variant `{params.get('variant')}`, "
             f"sampler {params.get('sampler')}, seed {params.get('seed')}, tuning shapes `{params.get('shapes')}` "
             f"({len(params.get('shape_list', []))}), modes {params.get('modes')}, stop rule {params.get('stop_rule')}."]
    if wall:
        lines.append(f"Search: {wall['submitted']} configurations measured ({wall['trials']} trials asked; outcomes "
                     f"{', '.join(f'{k} {v}' for k, v in counts.items())}) on {wall['workers']} worker(s) "
                     f"(one per GPU) in {wall['search_s']:.1f} s ({wall['trials_per_min']:.1f} configurations/min); "
                     f"prebuild {wall.get('prebuild_s', 0):.1f} s, A/A {wall['aa_s']:.1f} s, held-out {wall['heldout_s']:.1f} s, total {wall['total_s']:.1f} s.")
    return lines


def siblings(run_dir: Path) -> list[tuple]:
    """The runs of the same search as `run_dir` (same variant, shapes, trials, sampler, seed, stop
    rule), itself included: (run id, workers, configurations measured, search s, per minute)."""
    run_dir = Path(run_dir)
    me = read_run_file(run_dir, "params.json")
    key = {k: me.get(k) for k in ("variant", "shapes", "trials", "sampler", "seed", "modes", "stop_rule", "fake")}
    rows = []
    for other in sorted(run_dir.parent.iterdir()):
        p, w = read_run_file(other, "params.json"), read_run_file(other, "wall.json")
        if isinstance(p, dict) and p and w and all(p.get(k) == v for k, v in key.items()):
            rows.append((other.name, w["workers"], w["submitted"], w["search_s"], w["trials_per_min"]))
    return rows


def scaling(run_dir: Path) -> str:
    """One against several GPUs: sibling runs of the same search with another worker count."""
    rows = siblings(run_dir)
    if len({r[1] for r in rows}) < 2:
        return ""
    base = min((r for r in rows), key=lambda r: r[1])
    table = [[name, n, sub, round(s, 1), round(tpm, 2), round(tpm / base[4], 2)] for name, n, sub, s, tpm in rows]
    return ("One against several GPUs (same search; speedup = configurations per minute against the "
            f"{base[1]}-worker run):\n\n" + _md(["run", "workers", "configurations", "search s", "per min",
                                                  "speedup"], table))


def aa_table(aa) -> str:
    if aa.empty:
        return "No A/A recorded."
    rows = []
    for _, r in aa[aa["status"] == "ok"].iterrows():
        kind = r.get("comparison") if isinstance(r.get("comparison"), str) else "within"
        ref = "its twin on the same GPU" if kind == "within" else f"GPU {int(r['ref_gpu_index'])}"
        rows.append([Shape(int(r["B"]), int(r["H"]), int(r["S"]), int(r["D"]), bool(r["causal"])).spec,
                     r["mode"], f"{int(r['gpu_index'])} {r['gpu_name']}", ref, round(float(r["median_us"]), 2),
                     _ci(r["ratio_to_default"], r["ratio_to_default_lo"], r["ratio_to_default_hi"])])
    return _md(["shape", "mode", "GPU", "against", "median µs", "speedup [95 % CI]"], rows)


def section(run_dir: Path) -> str:
    run_dir = Path(run_dir)
    tuning, dispatch = read_run_file(run_dir, "tuning.parquet"), read_run_file(run_dir, "dispatch.json") or {}
    heldout, aa = read_run_file(run_dir, "heldout.parquet"), read_run_file(run_dir, "aa.parquet")
    mode = (dispatch or {}).get("mode", "hot")
    out = ["## Autotuning", "", *search_summary(run_dir), ""]
    if sc := scaling(run_dir):
        out += [sc, ""]
    out += ["### Leaderboard", "",
            f"Top {TOP} configurations per shape class ({dispatch.get('rule', '')}), {mode}: geometric-mean "
            "speedup over the default across the class's tuning shapes, with its 95 % interval; each "
            "shape's ratio measured on one GPU, interleaved.", ""]
    lb = leaderboard(tuning, mode=mode) if not tuning.empty else tuning
    out.append(_md(["class", "configuration", "shapes", "speedup [95 % CI]", "first trial"],
                   [[r.shape_class, f"`{r.impl}`", r.shapes, _ci(r.gm_ratio, r.gm_lo, r.gm_hi), r.trial]
                    for r in lb.itertuples()]) if not lb.empty else "No trial completed.")
    out += ["", "### Dispatch table", "",
            f"Chosen by run `{dispatch.get('run_id')}`: per class the best configuration when its interval's "
            "lower end is above 1, else the default.", ""]
    rows = [[cls, f"`{e['impl']}`", _ci(e["ratio"], e["ci_lo"], e["ci_hi"])] for cls, e in dispatch.get("classes", {}).items()]
    rows += [[cls, f"`{dispatch.get('variant')}` (default kept)", why] for cls, why in dispatch.get("considered", {}).items()
             if cls not in dispatch.get("classes", {})]
    out.append(_md(["class", "configuration", "speedup [95 % CI] / why not"], rows) if rows else "No class.")
    out += ["", "### Held-out shapes", ""]
    out += held_out_part(run_dir, heldout, dispatch)
    out += ["", "### A/A: the default against itself within and across GPUs", "", aa_table(aa), ""]
    if later := later_runs(run_dir):
        out += ["### Later searches of the same step", "",
                "Tuning runs recorded after this one whose tables were not committed, with what their held-out "
                "checks kept (`dispatch_committed.json` in each run folder):", "", *later, ""]
    return "\n".join(out)


def later_runs(run_dir: Path) -> list[str]:
    """One line a tuning run of the same variant recorded after `run_dir` (a later run id, not a --fake run):
    its search (configurations, sampler, GPUs, seconds) and, per shape class, what its held-out check kept:
    its tuned configuration with the tuning shapes' speedup, or the default and why."""
    run_dir = Path(run_dir)
    variant = read_run_file(run_dir, "params.json").get("variant")
    lines = []
    for other in sorted(p for p in run_dir.parent.iterdir() if p.name > run_dir.name):
        params, wall = read_run_file(other, "params.json"), read_run_file(other, "wall.json")
        if not isinstance(params, dict) or params.get("variant") != variant or params.get("fake") \
                or not isinstance(wall, dict):
            continue
        table = read_run_file(other, "dispatch_committed.json")
        table = table if isinstance(table, dict) else {}
        kept = [f"{cls}: `{e['impl']}` kept, {_ci(e['ratio'], e['ci_lo'], e['ci_hi'])} on its tuning shapes"
                for cls, e in table.get("classes", {}).items()]
        kept += [f"{cls}: the default, {why}" for cls, why in table.get("considered", {}).items()
                 if cls not in table.get("classes", {})]
        lines.append(f"- Run `{other.name}`: {wall['submitted']} configurations ({params.get('sampler')} sampler) on "
                     f"{wall['workers']} GPU(s) in {wall['total_s']:.0f} s. " + ("; ".join(kept) or "No class.") + ".")
    return lines


def held_out_part(run_dir: Path, heldout, dispatch: dict) -> list[str]:
    check = read_run_file(run_dir, "heldout_check.json")
    out = []
    if isinstance(check, list) and check:
        out += [f"Full correctness grid for the tuned dispatch: {check[0].get('status')} ({check[0].get('reason')}).", ""]
    if heldout.empty:
        return out + ["Not measured."]
    ok, classes = heldout_verdicts(heldout, dispatch)
    rows = [[Shape(r.B, r.H, r.S, r.D, bool(r.causal)).spec, r.shape_class, f"`{r.config}`",
             round(float(r.default_median_us), 2), round(float(r.median_us), 2),
             _ci(r.ratio_to_default, r.ratio_to_default_lo, r.ratio_to_default_hi), r.verdict,
             f"{int(r.gpu_index)}"] for r in ok.itertuples()]
    bad = heldout[heldout["status"] != "ok"]
    out.append(_md(["shape", "class", "configuration", "default µs", "tuned µs", "speedup [95 % CI]", "verdict", "GPU"],
                   rows))
    for r in bad.itertuples():
        out.append(f"\n- {r.B},{r.H},{r.S},{r.D}: {r.status}: {r.reason}")
    if classes:
        out += ["", "Per tuned class: " + "; ".join(f"{c}: **{v}**" for c, v in classes.items()) + "."]
    slower = ok[ok["verdict"] == "slower"] if not ok.empty else ok
    if not slower.empty:
        out.append(f"The tuned dispatch is slower than the default at {len(slower)} held-out shape(s).")
    if dropped := [c for c, v in classes.items() if v == "overfitted"]:
        out.append(f"The committed table (`kernels/variants/dispatch_{dispatch.get('variant')}.json`, "
                   f"lab.studies.tuning.dispatch.without_overfitted) keeps the default for {', '.join(dropped)}.")
    return out


# --- the figure -----------------------------------------------------------------------------


def figure(run_dir: Path, path: Path, mode: str = "hot") -> Path | None:
    """Each measured (trial, shape): speedup over the default (95 % CI) against the trial number;
    colour = GPU, marker = tuning shape (offset a little to the right per shape)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tuning = read_run_file(run_dir, "tuning.parquet")
    if tuning.empty:
        return None
    ok = tuning[(tuning["status"] == "ok") & (tuning["mode"] == mode)]
    dims = sorted(tuning["D"].dropna().unique())
    fig, axes = plt.subplots(1, len(dims), figsize=(6.5 * len(dims), 4.2), squeeze=False)
    for ax, d in zip(axes[0], dims):
        g = ok[ok["D"] == d]
        shapes = sorted({(r.B, r.H, r.S, bool(r.causal)) for r in g.itertuples()}, key=lambda t: (t[2], t[3]))
        markers = "osD^v<>"
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for (gpu, *shape), gg in g.groupby(["gpu_index", "B", "H", "S", "causal"]):
            i = shapes.index((shape[0], shape[1], shape[2], bool(shape[3])))
            yerr = [gg["ratio_to_default"] - gg["ratio_to_default_lo"], gg["ratio_to_default_hi"] - gg["ratio_to_default"]]
            ax.errorbar(gg["trial"] + 0.12 * i, gg["ratio_to_default"], yerr=yerr, fmt=markers[i % len(markers)],
                        ms=4, capsize=2, color=colors[int(gpu) % len(colors)],
                        label=f"GPU {int(gpu)} ({gg['gpu_name'].iloc[0]}), B={shape[0]} H={shape[1]} S={shape[2]} "
                              f"{'causal' if shape[3] else 'full'}")
        failed = tuning[(tuning["D"] == d) & (tuning["status"] != "ok")].drop_duplicates("trial")
        if not failed.empty:
            ax.scatter(failed["trial"], [ax.get_ylim()[0] if len(g) else 1.0] * len(failed), marker="x",
                       color="grey", label="not measured (invalid, failed or pruned)")
        ax.axhline(1.0, color="black", lw=0.8, ls="--")
        ax.set_title(f"D = {int(d)}")
        ax.set_xlabel("trial number")
        ax.set_ylabel("speedup over the default (median ratio, 95 % CI)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.18), fontsize=8, ncol=1, frameon=False)
    fig.suptitle(f"Tuning run {Path(run_dir).name}: every measured trial, {mode}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def write(run_dir: Path, out_dir: Path | None = None) -> Path:
    """tuning.md (the section, with the figure) and trials.png under reports/tuning/<run_id>/."""
    run_dir = Path(run_dir)
    out_dir = Path(out_dir or REPORT_DIR / run_dir.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig = figure(run_dir, out_dir / "trials.png")
    text = section(run_dir)
    if fig:
        text += f"\n![every trial's speedup over the default against its trial number]({fig.name})\n"
    (out_dir / "tuning.md").write_text(text)
    return out_dir / "tuning.md"


def main(argv: list[str] | None = None) -> int:
    from lab.measure import records
    from lab.measure.records import TUNING_DIR

    argv = sys.argv[1:] if argv is None else argv
    run_id = argv[0] if argv else records.latest_run(TUNING_DIR)
    if run_id is None:
        sys.exit(f"no complete tuning run under {TUNING_DIR}")
    print(write(TUNING_DIR / run_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
