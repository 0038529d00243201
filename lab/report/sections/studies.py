"""The studies beside the ladder: knock-outs (lab.report.knockouts, from the run folder), replication
against a second run (lab.report.replication) and autotuning (lab.report.tuning, from the tuning run
that chose the committed dispatch table)."""
from __future__ import annotations

from lab.measure.records import TUNING_DIR
from lab.report import knockouts, replication
from lab.report import tuning as tuning_report
from lab.report.formats import FIGURES
from lab.report.context import Context
from lab.studies.tuning import dispatch


def section_knockouts(ctx: Context) -> list[str]:
    """Ladder gain beside knock-out cost per optimization of the last step; the 2^4 factorial."""
    if not ctx.data.run_params.knockouts:
        return ["## Ablation by knock-out", "",
                "This run was recorded without knock-outs (`make ablation KNOCKOUTS=1` measures them).", ""]
    md = knockouts.section(ctx.data.rec.dir, ctx.figdir, figure_link=f"figures/{FIGURES['knockouts']}")
    if (ctx.figdir / FIGURES["knockouts"]).exists():
        ctx.figs["knockouts"] = ctx.figdir / FIGURES["knockouts"]
    return [*md.rstrip().splitlines(), ""]


def section_tuning(ctx: Context, variant: str | None = None) -> list[str]:
    """The tuning run named by the committed dispatch table (kernels/variants/dispatch_<variant>.json)."""
    table = dispatch.read_table(variant=variant)
    variant = table["variant"]
    run_id = table.get("run_id")
    run_dir = TUNING_DIR / run_id if run_id else None
    if run_dir is None or not run_dir.is_dir():
        why = (f"its tuning run `{run_id}` is not in data/tuning/" if run_id
               else "no tuning run has chosen a configuration yet")
        note = dispatch.other_steps_note(variant)
        return ["## Autotuning", "", f"The dispatch table of `{variant}` uses the default everywhere: {why} "
                "(`make tune` on a GPU host runs the search)." + (f" {note}" if note else ""), ""]
    lines = tuning_report.section(run_dir).rstrip().splitlines()
    path = tuning_report.figure(run_dir, ctx.figdir / FIGURES["tuning"])
    if path is not None:
        ctx.figs["tuning"] = path
        lines += ["", f"![Every measured trial of tuning run {run_id}: speedup over the default against the trial "
                      f"number, per head dim, coloured by GPU](figures/{FIGURES['tuning']})"]
    return [*lines, ""]


def section_replication(ctx: Context) -> list[str]:
    """"Does it replicate?": the run against ctx.base (given, or the latest complete run on another GPU
    model beside it); nothing when there is no such run."""
    return replication.section(ctx.data, ctx.base) if ctx.base is not None else []
