"""The attention real models run (issue 22): the `models` shapes' tables and figure, which steps take
which inputs, how the grids keep query heads that share a K/V head together, and the correctness
counts per element type and head layout (lab.report.models). Absent for runs without model shapes."""

from __future__ import annotations

from lab.report import models
from lab.report.formats import FIGURES, md_table, new_lines
from lab.report.context import Context
from lab.report.load import SUSTAINED


def section_models(ctx: Context) -> list[str]:
    data = ctx.data
    shapes = models.model_shapes(data)
    if not shapes:  # runs before issue 22, and runs without the models set: nothing to say
        return []
    L, add = new_lines()
    add("## The attention real models run")
    add("")
    add("Prefill of the models below (lab.studies.shapes.MODELS: their query heads, K/V heads and head dim), "
        "causal, bf16, 8192 tokens a shape; the last step of each branch and the peers, every SDPA backend that "
        "accepts the case and flex_attention (both called with `enable_gqa=True` where K/V heads are fewer than "
        "query heads)" + ("" if any("sdpa_default" in data.peers(s) for s in shapes) else
                          "; SDPA's default dispatch is not timed here, as it runs one of those backends") +
        ". TFLOP/s count 4·B·H·S²·D, halved for causal: sharing K/V heads saves memory traffic, not "
        f"FLOPs. Speedups are {data.speedup_words()}, > 1: the step is faster.")
    add("")
    cost = models.cost_statement(data, shapes)
    if cost:
        add(cost)
        add("")
    modes = [m for m in ("hot", "cold") if m in data.modes] + [m for m in data.modes if m not in ("hot", "cold")]
    for mode in modes + ([SUSTAINED] if set(shapes) & set(data.sustained_shapes) else []):
        timed = [s for s in shapes if models.kernels(data, s, mode)
                 or any(data.lat(p, s, mode) is not None for p in data.peers(s))]
        if not timed:
            continue
        headers, rows, align = models.latency_table(data, timed, mode)
        add(f"**Median µs (TFLOP/s), {mode}.**")
        add("")
        if mode == SUSTAINED:
            add(models.sustained_statement(data, timed))
            add("")
        add(md_table(headers, rows, align))
        add("")
        srows = models.speedup_rows(data, timed, mode)
        if srows:
            headers, rows, align = models.speedup_table(srows)
            add(f"**Against the peers, {mode}.**")
            add("")
            add(md_table(headers, rows, align))
            add("")
            for v in models.verdicts(srows):
                add(f"- {v}")
            if absent := data.absent_peers():
                add(f"- The fastest peer is the fastest of those measured; not measured: {', '.join(absent)} "
                    "(the first screen says why).")
            add("")
            apart = models.apart_from_medians(data, srows, mode)
            if apart:
                add("Where a speedup differs by more than 1 % from the ratio of the medians in the latency table "
                    "(a row whose samples straddle a change of clock state: its median mixes the two states, "
                    "the round-paired ratio compares the rows in the same one): " + "; ".join(apart) + ".")
                add("")
    ctx.notes["models"] = models.figure_models(data, shapes, ctx.figdir / FIGURES["models"])
    ctx.add_figure(add, "models", "TFLOP/s per model shape (hot) and each step's speedup over the "
                   "fastest peer with its 95 % interval")
    add("**Which steps take which inputs.** " + models.inputs_statement(data))
    add("")
    add("**Query heads that share a K/V head run together.** " + "\n".join(models.grid_order(data, shapes)))
    add("")
    counts = models.correctness_counts(data)
    if counts:
        add("**Correctness per element type and head layout** (correctness.json and peer_correctness.json: checks "
            "run, passed and failed against the fp32 reference; not taken: a step asked for inputs it does not "
            "take).")
        add("")
        add(md_table(["dtype", "heads", "checks", "passed", "failed", "not taken"], counts, "llrrrr"))
        add("")
    return L
