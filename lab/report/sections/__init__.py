"""The report's sections, in reading order: each a function `section_x(ctx) -> list[str]` of Markdown lines.

To add a section, write a function that takes a `Context` and returns its
lines (`[]` when the run has nothing for it) and insert it into `SECTIONS` where it should appear.
`FIRST_SCREEN` names the sections shown open at the top of the HTML; every later `## ` section is
collapsible there.
"""
from __future__ import annotations

from lab.report.context import Context, Report
from lab.report.provenance import step_diffs
from lab.report.sections.ablation import section_ablation, section_bar
from lab.report.sections.decode import section_decode
from lab.report.sections.first_screen import section_first_screen
from lab.report.sections.front import section_environment, section_headline, section_objective, section_title
from lab.report.sections.method import section_methodology
from lab.report.sections.models import section_models
from lab.report.sections.reference import section_reference
from lab.report.sections.results import (section_missing, section_per_shape, section_profiler, section_reproduce,
                                         section_sweep, section_threats)
from lab.report.sections.studies import section_knockouts, section_replication, section_tuning
from lab.report.sections.sustained import section_sustained

FIRST_SCREEN = [section_title, section_first_screen]
SECTIONS = FIRST_SCREEN + [section_headline, section_bar, section_reference, section_models, section_sustained,
                           section_ablation, section_knockouts, section_decode, section_replication, section_per_shape,
                           section_sweep, section_profiler, section_tuning,
                           section_objective, section_methodology, section_environment, section_missing,
                           section_threats, section_reproduce]
# Knock-out and tuning impls (`<variant>~no_<switch>`, `<variant>@...`) appear only in their own
# sections; every other table leaves them out (RunData.impls(studies=True) includes them).


def build(data, reports_dir, base=None, companions=None) -> Report:
    """Every section of SECTIONS in order, its figures under reports_dir/figures; `base`: a second
    run (RunData) for "Does it replicate?"; `companions`: runs (RunData) of some of issue 46's target modes alone
    whose rows the targets are judged on as well (lab.report.sections.reference.companions_refusal)."""
    ctx = Context.of(data, reports_dir, base, companions)
    ctx.figdir.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for section in SECTIONS:
        lines += section(ctx)
    ctx.drop_stale_figures()
    md = "\n".join(lines).rstrip() + "\n"
    return Report(markdown=md, figures=ctx.figs, diffs=step_diffs(data),
                  title=f"FlashAttention ablation · {data.run_id}", label=ctx.label)
