"""Issue 49's records and report on the CPU: which GPU each replicate ran on, and how a row's replicate
medians split between GPUs and between processes on one GPU (a one-way ANOVA worked by hand here)."""

import json
import math
import shutil

import pytest

from lab.kernels.shape import Shape
from lab.measure import records, stats
from lab.report import tables
from lab.report.committed import default_run
from lab.report.load import RunData
from lab.report.sections.method import _where_replicates_ran
from tests.fixture_runs import replicate_gpu_uuids


def _reps(medians):
    """Replicates whose samples have exactly these medians (three samples each, the median in the middle)."""
    return {i: [m * 0.99, m, m * 1.01] for i, m in enumerate(medians)}


def test_the_split_is_the_anova_worked_by_hand():
    # log medians: GPU a at 0 and 0 and 0.2 (three replicates), GPU b at 0.5 and 0.7 (two)
    m = [1.0, 1.0, math.exp(0.2), math.exp(0.5), math.exp(0.7)]
    gpu_of = {0: "a", 1: "a", 2: "a", 3: "b", 4: "b"}
    got = stats.gpu_split(_reps(m), gpu_of)
    # group means 0.2/3 and 0.6, grand mean 1.4/5 = 0.28
    ms_between = (3 * (0.2 / 3 - 0.28) ** 2 + 2 * (0.6 - 0.28) ** 2) / 1
    ms_within = ((0 - 0.2 / 3) ** 2 * 2 + (0.2 - 0.2 / 3) ** 2 + 0.1 ** 2 * 2) / 3
    n0 = (5 - (9 + 4) / 5) / 1
    assert (got.gpus, got.replicates) == (2, 5)
    assert got.between_processes == pytest.approx(ms_within)
    assert got.between_gpus == pytest.approx((ms_between - ms_within) / n0)


def test_gpus_that_agree_better_than_their_processes_get_zero():
    got = stats.gpu_split(_reps([1.0, 1.2, 1.0, 1.2]), {0: "a", 1: "a", 2: "b", 3: "b"})
    assert got.between_gpus == 0.0 and got.between_processes > 0


@pytest.mark.parametrize("gpu_of", [{0: "a", 1: "a", 2: "a"}, {0: "a", 1: "a", 2: "b"}])
def test_the_split_needs_two_replicates_on_each_of_two_gpus(gpu_of):
    with pytest.raises(ValueError, match="two GPUs or more with two replicates or more each"):
        stats.gpu_split(_reps([1.0, 1.1, 1.2]), gpu_of)


class _FourReplicates:
    """What gpu_split_table reads of a run: one shape, one mode, two rows, four replicates on two GPUs."""
    measured_shapes = [Shape(4, 16, 512, 64, False)]
    modes = ["hot"]
    replicate_gpus = {i: {"gpu_index": g, "gpu_uuid": f"GPU-{g}", "gpu_name": "H100"} for i, g in enumerate([0, 0, 1, 1])}

    def impls(self, shape):
        return ["a", "b"]

    def reps(self, impl, shape, mode):
        # row a: the GPUs differ by 10 %, the processes by 1 %; row b: the same on both GPUs
        return _reps([1.0, 1.01, 1.1, 1.111] if impl == "a" else [1.0, 1.02, 1.0, 1.02])


def test_the_report_table_splits_each_shape_and_counts_rows_where_gpus_dominate():
    (row,) = tables.gpu_split_table(_FourReplicates())
    assert row[0] == "(4, 16, 512, 64) non-causal" and row[1] == 2 and row[4] == "1 of 2"
    one_gpu = _FourReplicates()
    one_gpu.replicate_gpus = {i: {"gpu_index": 0, "gpu_uuid": "GPU-0"} for i in range(4)}
    assert tables.gpu_split_table(one_gpu) == []


def test_a_run_says_where_its_replicates_ran_and_an_old_run_says_nothing(tmp_path):
    """Of the runs in the tree, issue 49's N-GPU run ran its replicates side by side on a host's GPUs (GPUS=N; as
    many H200s as its replicates.json names GPU UUIDs) and says so. Copies of the report's run, its replicates
    given GPUs here: on one GPU it says nothing; as recorded before replicates named their GPU it says nothing and
    names none; spread over two GPUs with GPUS=2 it says side by side; on two GPUs with GPUS=1, each its machine's
    GPU 0 (a run resumed on another machine: step 61's was), one after another, the GPUs by UUID."""
    run = default_run()
    several = [r for r in records.list_runs() if len(replicate_gpu_uuids(r)) >= 2 and json.loads(
        (records.RunRecord.open(r).dir / "params.json").read_text()).get("gpus") not in (None, "1")]
    assert several, "issue 49's N-GPU run is kept in data/runs"
    several = several[0]
    n = len(replicate_gpu_uuids(several))
    assert _where_replicates_ran(RunData(records.RunRecord.open(several))).startswith(f"side by side on {n} GPUs")
    log = json.loads((records.RunRecord.open(run).dir / "replicates.json").read_text())
    assert len(log["timing"]["runs"]) == 3
    copy = tmp_path / run
    shutil.copytree(records.RunRecord.open(run).dir, copy)

    def with_gpus(gpus, at_once="1"):  # each an index (its UUID GPU-<index>), (index, UUID), or None: not named
        for r, g in zip(log["timing"]["runs"], gpus):
            r.pop("gpu", None)
            if g is not None:
                index, uuid = g if isinstance(g, tuple) else (g, f"GPU-{g}")
                r["gpu"] = {"gpu_index": index, "gpu_uuid": uuid, "gpu_name": "NVIDIA H100 80GB HBM3"}
        (copy / "replicates.json").write_text(json.dumps(log))
        params = json.loads((copy / "params.json").read_text())
        (copy / "params.json").write_text(json.dumps({**params, "gpus": at_once}))
        return RunData(records.RunRecord.open(str(copy)))

    assert _where_replicates_ran(with_gpus([0, 0, 0])) == ""  # one GPU: nothing to say
    old = with_gpus([None, None, None])  # recorded before replicates named theirs
    assert old.replicate_gpus == {} and _where_replicates_ran(old) == ""
    text = _where_replicates_ran(with_gpus([2, 5, 2], at_once="2"))
    assert text == ("side by side on 2 GPUs (NVIDIA H100 80GB HBM3; GPU 2: replicates 1, 3; GPU 5: replicate 2), "
                    "one a GPU at a time")
    resumed = with_gpus([(0, "GPU-first"), (0, "GPU-second"), (0, "GPU-second")])  # replicate 1 before the resume
    assert _where_replicates_ran(resumed) == (
        "one after another on 2 GPUs, the run resumed on a second machine (resumes.json; NVIDIA H100 80GB HBM3; "
        "GPU-first: replicate 1; GPU-second: replicates 2, 3)")


def test_three_gpus_weigh_their_groups_as_the_anova_does():
    # log medians: GPU a 0, 0.1; GPU b 0.3, 0.3, 0.4; GPU c 0.8, 1.0
    logs = [0.0, 0.1, 0.3, 0.3, 0.4, 0.8, 1.0]
    gpu_of = dict(enumerate("aabbbcc"))
    got = stats.gpu_split(_reps([math.exp(x) for x in logs]), gpu_of)
    means, sizes, grand = [0.05, 1.0 / 3, 0.9], [2, 3, 2], sum(logs) / 7
    ms_between = sum(n * (m - grand) ** 2 for n, m in zip(sizes, means)) / 2
    ms_within = (2 * 0.05 ** 2 + 2 * (1 / 30) ** 2 + (0.4 - 1 / 3) ** 2 + 2 * 0.1 ** 2) / 4
    n0 = (7 - (4 + 9 + 4) / 7) / 2
    assert got.gpus == 3 and got.between_processes == pytest.approx(ms_within)
    assert got.between_gpus == pytest.approx((ms_between - ms_within) / n0)


def test_bad_replicates_are_named_as_such():
    with pytest.raises(ValueError, match="^reps must be non-empty$"):
        stats.gpu_split({}, {})
    with pytest.raises(ValueError, match="^reps must contain only finite values$"):
        stats.gpu_split({0: [1.0, float("nan")], 1: [1.0]}, {0: "a", 1: "a"})
