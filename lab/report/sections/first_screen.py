"""The first screen: one sentence with the finding, the hero figure and the compact ladder table."""

from __future__ import annotations

from lab.report import branches
from lab.report.bar import bar_count, bar_step
from lab.report.formats import FIGURES, shape_label
from lab.report.load import manifest_variant
from lab.report.context import Context, companions_for
from lab.report.ladder import figure_hero, finding, ladder_table
from lab.report.sections.reference import first_screen_line


def section_first_screen(ctx: Context) -> list[str]:
    data, head = ctx.data, ctx.head
    L: list[str] = []
    if head is None:
        return ["No samples at any shape: there is nothing to report on timing.", ""]
    sentence = finding(data, head)
    if sentence:
        L += [f"**{sentence}**", ""]
    best = bar_step(data)
    met, parts = bar_count(data, best) if best else (0, 0)
    if parts:
        L += [f"**The bar: {met} of {parts} parts met**" + (", all of them" if met == parts else f", {parts - met} missed")
              + f" ({best} against the fastest SDPA backend at every shape and mode, and its TFLOP/s and profile "
              "targets: \"Against SDPA: the bar\").", ""]
    if reference := first_screen_line(data, companions_for(data, data, ctx.base, ctx.companions)):
        L += [reference, ""]
    absent = data.absent_peers_plain()
    if absent:
        L += ["**Not measured in this run:** " + "; ".join(f"{p}, because {why}" for p, why in absent.items())
              + ". \"The fastest peer\" means the fastest of the peers measured, here and throughout.", ""]
    if later := branches.not_asked(data):
        listed = (", ".join(f"{manifest_variant(v).index} {v}" for v in later) if len(later) <= 3
                  else f"{len(later)} steps ({branches.numbers(later)})")
        L += [f"**Steps of this tree that the run did not measure:** {listed}, not among the variants it was asked "
              "for; a branch's end in this report is the last step of that branch the run measured.", ""]
    ctx.notes["hero"] = figure_hero(data, head, ctx.figdir / FIGURES["hero"])
    ctx.add_figure(L.append, "hero", f"TFLOP/s of every step at {shape_label(head)}, hot, "
                   "with a dashed line per peer measured in this run")
    if len(ctx.abl):
        L += [f"The ladder at {shape_label(head)}, hot, branch by branch: {branches.summary(data.variants)}; each "
              f"step against its parent (medians; speedups are {data.speedup_words()}, > 1: this "
              "step is faster):", "", ladder_table(data, ctx.abl, head), ""]
    return L
