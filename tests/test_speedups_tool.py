"""python -m lab.report.speedups: one implementation over others at every shape and mode a recorded run timed both
(the committed report's RUN, read as a landing's check folder reads it). Expectations come from the run's samples
and the manifest's text, not from lab.report.load."""

import tomllib

import numpy as np
import pandas as pd
import pytest

from lab.kernels.manifest import REPO
from lab.measure import records
from lab.report import committed, speedups

STEP = "counter_tile_from_2k_d64"  # step 69: the RUN times it at every shape, its parent too


@pytest.fixture(scope="module")
def run():
    return committed.committed().run


@pytest.fixture(scope="module")
def samples(run):
    s = records.with_replicate(pd.read_parquet(records.RunRecord.open(run).dir / "samples.parquet"))
    return s[~records.dropped(s)]


def _parent_in_manifest_text(name):
    entries = tomllib.loads((REPO / "kernels" / "variants" / "manifest.toml").read_text())["variant"]
    return next(e["parent"] for e in entries if e["name"] == name)


def _row(lines, label, mode):
    return next(x for x in lines[2:] if x.startswith(label) and x[len(label):].split()[0] == mode)


def _cell(row, i=0):
    cells = row.split("x [")
    return float(cells[i].split()[-1])


def test_a_step_is_compared_with_its_manifest_parent_by_default(run, samples):
    parent = _parent_in_manifest_text(STEP)
    lines = speedups.table(run, STEP)
    assert lines[0].startswith(f"{STEP} over {parent}, run {run}")
    row = _row(lines, "(4, 16, 4096, 128) non-causal", "hot")
    at = samples[(samples.B == 4) & (samples.H == 16) & (samples.S == 4096) & (samples.D == 128) & ~samples.causal
                 & (samples["mode"] == "hot")]
    per = []
    for _, one in at.groupby("replicate"):
        medians = one.groupby("impl")["latency_us"].median()
        per.append(medians[parent] / medians[STEP])  # > 1: the step faster
    assert len(per) >= 2
    # round by round over the replicates: near the geometric mean of the replicates' ratios of medians
    assert _cell(row) == pytest.approx(float(np.exp(np.mean(np.log(per)))), rel=0.01)
    lo, hi = (float(x) for x in row.split("[")[1].split("]")[0].split(","))
    assert lo <= _cell(row) <= hi


def test_rows_are_the_shapes_and_modes_where_the_run_timed_both(run, samples):
    lines = speedups.table(run, STEP, ["flash_attn3", "sdpa_flash"])
    keys = ["B", "H", "S", "D", "causal", "H_kv", "dtype", "mode"]
    have = {impl: set(map(tuple, g[keys].drop_duplicates().itertuples(index=False)))
            for impl, g in samples.groupby("impl") if impl in (STEP, "flash_attn3", "sdpa_flash")}
    expected = (have["flash_attn3"] | have["sdpa_flash"]) & have[STEP]
    assert len(lines) - 2 == len(expected) > 0
    only_fa3 = (have["flash_attn3"] - have["sdpa_flash"]) & have[STEP]
    dashes = [x for x in lines[2:] if x.rstrip().endswith(" -")]
    assert len(dashes) == len(only_fa3) > 0  # sdpa_flash's cell "-" where only FA3 was timed beside it


def test_at_least_marks_the_rows_under_it(run):
    lines = speedups.table(run, STEP, ["flash_attn3"], shapes="large", modes=["hot"], at_least=0.0)
    assert len(lines) == 6 and all(x.endswith("  ok") for x in lines[2:])  # the large set: 4 shapes, hot
    points = [_cell(x) for x in lines[2:]]  # printed to 3 decimals: the true points within 0.0005
    above_all = speedups.table(run, STEP, ["flash_attn3"], shapes="large", modes=["hot"], at_least=max(points) + 0.001)
    assert all(x.endswith("  below") for x in above_all[2:])
    cut = (min(points) + max(points)) / 2
    assert max(points) - min(points) > 0.002, "the large set's points too close to split"
    marked = speedups.table(run, STEP, ["flash_attn3"], shapes="large", modes=["hot"], at_least=cut)
    clear = [i for i, p in enumerate(points) if abs(p - cut) > 0.0005]
    assert [marked[2 + i].endswith("  below") for i in clear] == [points[i] < cut for i in clear]
    assert any(points[i] < cut for i in clear) and any(points[i] > cut for i in clear)


def test_a_mode_the_run_has_not_at_those_shapes_gives_no_row(run, samples):
    canonical = samples[(samples.S == 512) & (samples["mode"] == "sustained")]
    assert canonical.empty
    lines = speedups.table(run, STEP, shapes="canonical", modes=["sustained"])
    assert lines[2:] == ["(no shape and mode where the run timed both)"]


@pytest.mark.parametrize("argv, named", [
    (["20990101T000000Z-nothing", STEP], "20990101T000000Z-nothing"),
    ([None, "no_such_step"], "no_such_step"),
    ([None, STEP, "no_such_peer"], "no_such_peer"),
    ([None, STEP, "--modes", "warm"], "warm"),
    ([None, "baseline"], "no parent"),
    ([None, STEP, "--shapes", "hugest"], "hugest"),
])
def test_bad_input_is_named(run, argv, named, capsys):
    with pytest.raises(SystemExit) as e:
        speedups.main([run if a is None else a for a in argv])
    assert e.value.code == 2 and named in capsys.readouterr().err
