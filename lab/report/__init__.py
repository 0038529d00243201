"""The report of one run: tables, figures, `OPTIMIZATION_REPORT.md` and a self-contained `ablation.html`.

    python -m lab.report [RUN_ID] [--reports-dir reports] [--runs-root data/runs]

Reads only the run folder (`lab.measure.records.RunRecord`): every number comes from its JSON files,
samples.parquet, summary.csv and profile.csv. The kernel ladder's titles, hypotheses and
predictions come from `kernels/variants/manifest.toml` and the code diffs from the variant files
(whose hashes are checked against the run's build.json). Statistics are recomputed from the raw
samples with `lab.measure.stats` (throttled samples dropped, bootstrap seed 0), so the output is
deterministic: writing twice gives byte-identical Markdown and HTML.

    >>> from lab import report
    >>> from lab.measure import records
    >>> rec = records.RunRecord.open("20261121T232749Z-c1f7639")
    >>> report.ablation_table(rec)           # one row per variant, branch by branch
    >>> report.write(rec, "reports")         # -> reports/OPTIMIZATION_REPORT.md (+ html, figures/)

Hypothesis verdicts (documented in the report as well): the step's profiler metric (manifest
`metric`, mapped through `lab.measure.ncu_metrics.HYPOTHESIS_METRICS`) is compared between the parent and the
step at the profiled shape matching the headline shape.
  confirmed    the metric moved the predicted way by more than 5 % (relative) AND the speedup over
               the parent is "faster" (or "within noise" where the predicted range includes 1.0);
  refuted      the metric moved the other way by more than 5 %, or the speedup is "slower";
  inconclusive anything else; "inconclusive (no profile)" where either profile value is missing.
"""

from __future__ import annotations

from lab.kernels.shape import Shape  # noqa: F401  (re-exported: report.Shape)
from lab.studies.shapes import HEADLINE  # noqa: F401  (the headline shape, lab.studies.shapes)
from lab.report.formats import (DPI, FIGURES, KEYS, METRIC_MOVE, MISSING, PEER, XVAL_GAP, fmt,  # noqa: F401
                                fmt_ci, fmt_g, fmt_p, fmt_ratio, fmt_us, md_table, shape_label)
from lab.report.load import RunData, run_data  # noqa: F401
from lab.report.tables import (NCU_XVAL_MIN_US, PRECISION_BAND, ablation_frame, ablation_table,  # noqa: F401
                               capped_rows, clock_summary, crossval_table, hypothesis_rows, hypothesis_verdict,
                               ncu_crossval_table, noise_floor, precision_summary, shape_group, shape_tables)
from lab.report.findings import FINDING_FOR_HYPOTHESIS, profiler_findings, step_moves  # noqa: F401
from lab.report.bar import *  # noqa: F401,F403  (BAR_* constants, bar_rule, bar_step, success_bar)
from lab.report.figures import (figure_latency, figure_roofline, figure_speedup, figure_stalls,  # noqa: F401
                                figure_sweep, sweep_groups)
from lab.report.committed import default_run  # noqa: F401
from lab.report.render import main, render_html, write  # noqa: F401
