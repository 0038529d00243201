"""python -m lab.report.targets: issue 46's targets on a recorded run, each judged row per replicate (the committed
report's RUN, read as a landing reads its run)."""

import numpy as np
import pandas as pd
import pytest

from lab.measure import records
from lab.report import committed, targets


@pytest.fixture(scope="module")
def printed():
    run = committed.committed().run
    return run, targets.report(run, "counter_tile_from_2k_d64")


def _cells(lines, shape_label, mode, against):
    row = next(x for x in lines if x.startswith(f"| {shape_label} | {mode} | {against} |"))
    cells = [c.strip() for c in row.strip("|").split("|")][3:]
    return [float(c) for c in cells[:-1] if c != "-"], float(cells[-1].split()[0])


def test_each_replicate_reads_as_its_own_medians_say(printed):
    run, lines = printed
    assert lines[0].startswith(f"run {run}, GPU ") and any(x.startswith("- Target 1 (") for x in lines)
    s = records.with_replicate(pd.read_parquet(records.RunRecord.open(run).dir / "samples.parquet"))
    s = s[~records.dropped(s)]
    at = s[(s.B == 4) & (s.H == 16) & (s.S == 4096) & (s.D == 128) & ~s.causal & (s["mode"] == "hot")]
    per, whole = _cells(lines, "(4, 16, 4096, 128)", "hot", "flash_attn3")
    assert len(per) == at["replicate"].nunique() >= 2
    for r, cell in zip(sorted(at["replicate"].unique()), per):
        one = at[at["replicate"] == r]
        medians = one.groupby("impl")["latency_us"].median()
        # the tool compares round by round; the ratio of the replicate's medians is within 1 % of it
        assert cell == pytest.approx(medians["flash_attn3"] / medians["counter_tile_from_2k_d64"], rel=0.01)
    # over the replicates a speedup is the geometric mean of theirs: between the smallest and the largest
    assert min(per) - 0.001 <= whole <= max(per) + 0.001
    assert whole == pytest.approx(float(np.exp(np.mean(np.log(per)))), abs=0.002)


def test_a_run_or_step_not_there_is_named(capsys):
    with pytest.raises(SystemExit) as e:
        targets.main(["20990101T000000Z-nothing"])
    assert e.value.code == 2 and "20990101T000000Z-nothing" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        targets.main([committed.committed().run, "--step", "no_such_step"])
    assert e.value.code == 2 and "no_such_step" in capsys.readouterr().err


def test_a_replicate_alone_holds_that_replicates_samples_and_no_other(tmp_path):
    from lab.kernels.shape import Shape

    run = records.RunRecord.open(committed.committed().run)
    s = records.with_replicate(pd.read_parquet(run.dir / "samples.parquet"))
    s = s[~records.dropped(s)]
    shape, step = Shape(4, 16, 4096, 128, False), "counter_tile_from_2k_d64"
    at = s[(s.B == 4) & (s.H == 16) & (s.S == 4096) & (s.D == 128) & ~s.causal & (s["mode"] == "hot")
           & (s["impl"] == step)]
    counts = at.groupby("replicate").size()
    assert len(counts) >= 2
    for r, n in counts.items():
        alone = targets.replicate_alone(run.dir, int(r), tmp_path)
        assert len(alone.lat(step, shape, "hot")) == n
        assert set(alone.raw_samples["replicate"]) == {r}
