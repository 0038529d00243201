"""What a run folder's records imply, computed when read and never written into the folder.

A run folder keeps each measured fact once (lab.measure.records): the raw samples, the stop
records, the plan and the notes. Everything below is a function of them and of this code:

    summary(rec)            one row per (impl, shape, mode) over every replicate (SUMMARY_COLUMNS)
    calibration(rec)        the leave-one-replicate-out coverage of the step-vs-parent intervals
    sustained_calibration(rec)  the same over the sustained mode's ratios
    shape_notes(rec)        one note per timed shape (errors, unsupported and left-out peers)

The two that take seconds (thousands of bootstraps) are kept under build/derived/ (`kept`; so are
the factorial's effects, lab.studies.factorial.run_effects), each file named by a hash of what it is
computed from: the run's files it reads and the source of the code that computes it. A changed
sample or a changed estimator is a new name, so a kept result is never stale; `make clean` removes
them. The profile stage computes them ahead (lab.studies.ahead), so that the report that follows finds
them kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from lab.kernels.manifest import REPO
from lab.kernels.shape import Shape
from lab.measure import records

CACHE = REPO / "build" / "derived"
ROW_KEYS = ("impl", *records.SHAPE_COLUMNS, "mode")


def summarize(samples, stops):
    """The summary table of a plan's samples and its stop records: per (impl, shape, mode) with an
    unthrottled sample, lab.studies.measure_shape.summary_row over the replicates (the median over
    replicates and its interval), stopped by "cap" where any replicate was, the throttled samples
    dropped summed over the replicates, the first replicate's input sets."""
    import pandas as pd

    from lab.measure import parallel
    from lab.studies.measure_shape import summary_row

    samples = records.with_shape_columns(samples)
    stops_by_row: dict = {}
    for r in records.with_shape_columns(stops).to_dict("records"):
        stops_by_row.setdefault((r["impl"], Shape.from_row(r), r["mode"]), []).append(r)
    rows = []  # summary_row's arguments, one tuple a row: independent bootstraps, spread over the cores
    for key, grp in samples.groupby(list(ROW_KEYS), sort=False):
        row = dict(zip(ROW_KEYS, key))
        shape = Shape.from_row(row)
        kept = {int(r): g["latency_us"].to_numpy(float) for r, g in grp[~records.dropped(grp)]
                .groupby("replicate")}
        reps = sorted(stops_by_row.get((row["impl"], shape, row["mode"]), []), key=lambda r: r["replicate"])
        if not kept or not reps:
            continue
        stopped = "cap" if any(r["stopped_by"] == "cap" for r in reps) else reps[0]["stopped_by"]
        rows.append((shape, row["impl"], row["mode"], kept, stopped,
                     sum(int(r["dropped_throttled"]) for r in reps), _int(reps[0]["input_sets"])))
    return pd.DataFrame(parallel.starmap(summary_row, rows), columns=records.SUMMARY_COLUMNS)


def _int(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else int(x)


def summary(rec):
    """The timing's summary table (summarize over samples.parquet and the timing's stop records)."""
    rec.require_current_layout()

    from lab.measure import parallel, stats
    from lab.studies import measure_shape, replicates

    def compute():
        stops = replicates.stops(rec)
        return summarize(rec.read_samples(), stops[stops["plan"] == "timing"])

    return kept(rec, "summary", [records.STOPS, "samples.parquet"],
                 [stats, parallel, measure_shape], compute, table=True)


def calibration(rec) -> dict:
    """The leave-one-replicate-out calibration (lab.studies.calibration.leave_one_out_run) of the run's
    samples under its parameters."""
    from lab.measure import parallel, stats
    from lab.studies import calibration as cal
    from lab.studies.params import RunParams

    return kept(rec, "calibration", ["samples.parquet", "params.json"], [stats, parallel, cal],
                 lambda: cal.leave_one_out_run(rec.read_samples(), RunParams.read(rec)))


def sustained_calibration(rec) -> dict:
    """The leave-one-replicate-out calibration of the sustained mode's ratios
    (lab.studies.calibration.leave_one_out_sustained)."""
    from lab.measure import parallel, stats
    from lab.studies import calibration as cal
    from lab.studies.params import RunParams

    return kept(rec, "sustained-calibration", ["samples.parquet", "params.json"], [stats, parallel, cal],
                lambda: cal.leave_one_out_sustained(rec.read_samples(), RunParams.read(rec)))


def shape_notes(rec) -> list[dict]:
    """One note per timed shape, merged over the timing's replicates (lab.studies.replicates.merge_notes)."""
    from lab.studies import replicates

    rec.require_current_layout()
    return replicates.merge_notes(replicates.replicate_notes(rec.dir, "timing"))


# --- kept results ------------------------------------------------------------------------------


def key(rec, name: str, inputs: list[str], modules: list) -> str:
    """The hash that names a derived result: its name, the bytes of the run's files it reads (an absent
    one counts as absent) and the source of the modules that compute it."""
    h = hashlib.sha256(name.encode())
    for f in inputs:
        path = rec.path(f)
        h.update(f.encode() + b"\0")
        h.update(path.read_bytes() if path.exists() else b"\0absent\0")
    for m in modules:
        h.update(Path(m.__file__).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:24]


def keeping() -> bool:
    """Whether results are kept under CACHE (LAB_DERIVED_CACHE=0: none is kept or read)."""
    return os.environ.get("LAB_DERIVED_CACHE", "1") not in ("0", "", "false")


def kept(rec, name, inputs, modules, compute, table=False):
    """compute(), or its result kept under CACHE by an earlier call with the same key. A result is
    always returned as read back from its bytes (parquet or JSON), so that the first call and every
    later one give the same values and types. LAB_DERIVED_CACHE=0: nothing is kept or read."""
    import io

    import pandas as pd

    def decode(data: bytes):
        return pd.read_parquet(io.BytesIO(data)) if table else json.loads(data)

    path = CACHE / f"{rec.run_id}-{name}-{key(rec, name, inputs, modules)}.{'parquet' if table else 'json'}"
    use = keeping()
    if use and path.exists():
        try:
            return decode(path.read_bytes())
        except Exception:  # noqa: BLE001 - a broken kept file is computed again
            pass
    value = compute()
    if table:
        buf = io.BytesIO()
        value.to_parquet(buf, index=False)
        data = buf.getvalue()
    else:
        data = json.dumps(value, default=str).encode()
    if use:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)  # atomic: another process reading it sees the whole file or none
        except OSError:  # a read-only tree: computed each time
            pass
    return decode(data)
