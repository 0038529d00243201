"""lab.measure.ncu_xval without a GPU: ncu's rows paired with what was launched (graphs: the slope over
graph sizes; lone launches: each launch's kernels up to a separator), the peer and shapes a run checks,
the command line, and the report's table. Expectations come from the synthetic durations' own
construction (a known time per launch plus a varying cost a graph), not from the code under test."""

import math
import random

import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.measure import ncu_xval
from lab.measure.profile import SEPARATOR_KERNEL
from lab.studies.profiling import xval_plan

SEP = f"at::<unnamed>::{SEPARATOR_KERNEL}(long)"


def graphs_of(per_us: float, launches: list[int], replays: int, seed: int = 0) -> list[dict]:
    """Profiled graphs: n launches of per_us each plus a cost of ncu's of 100-400 us, drawn a graph."""
    rng = random.Random(seed)
    return [{"kernel": "graph", "duration": n * per_us + rng.uniform(100.0, 400.0)}
            for n in launches for _ in range(replays)]


def lone_of(times: list[list[float]]) -> list[dict]:
    """Lone launches, each its kernels' durations, each closed by a separator kernel."""
    out = []
    for kernels in times:
        out += [{"kernel": f"k{i}", "duration": d} for i, d in enumerate(kernels)]
        out.append({"kernel": SEP, "duration": 1.5})
    return out


def test_graphs_give_the_time_per_launch_whatever_each_graphs_cost():
    plan = [{"shape": "4,16,4096,128", "mode": "graphs", "hot_reps": 10, "launches": [10, 20, 40, 80]}]
    rows = ncu_xval.pair(plan, graphs_of(101.0, [10, 20, 40, 80], 8), replays=8)
    (r,) = rows
    # the cost (100-400 us) spread over 10-80 launches would be 1.25-40 us a launch; the slope carries none
    assert r["per_launch_us"] == pytest.approx(101.0, rel=0.01)
    assert r["low_us"] <= r["per_launch_us"] <= r["high_us"]
    assert 100.0 <= r["overhead_us"] <= 400.0
    assert r["launches"] == [n for n in (10, 20, 40, 80) for _ in range(8)] and len(r["durations_us"]) == 32


def test_lone_launches_sum_each_launchs_kernels_and_take_the_median():
    plan = [{"shape": "1,16,16384,128", "mode": "lone", "hot_reps": 1, "launches": [1]}]
    launches = [[2990.0, 4.0], [3000.0, 4.0], [3010.0, 4.0], [3100.0, 4.0], [2900.0, 4.0]]
    (r,) = ncu_xval.pair(plan, lone_of(launches), replays=5)
    assert r["durations_us"] == [2994.0, 3004.0, 3014.0, 3104.0, 2904.0]
    assert r["per_launch_us"] == 3004.0 and r["overhead_us"] == 0.0
    assert (r["low_us"], r["high_us"]) == (2994.0, 3014.0)  # the quartiles of the five


def test_shapes_pair_in_order_across_modes():
    plan = [{"shape": "a", "mode": "graphs", "hot_reps": 4, "launches": [4, 8, 16, 32]},
            {"shape": "b", "mode": "lone", "hot_reps": 1, "launches": [1]}]
    kernels = graphs_of(250.0, [4, 8, 16, 32], 3) + lone_of([[700.0]] * 3)
    rows = ncu_xval.pair(plan, kernels, replays=3)
    assert [r["shape"] for r in rows] == ["a", "b"]
    assert rows[0]["per_launch_us"] == pytest.approx(250.0, rel=0.02) and rows[1]["per_launch_us"] == 700.0


@pytest.mark.parametrize("cut", ["short", "extra", "not_a_graph", "no_separator", "empty_launch"])
def test_a_count_that_does_not_match_the_plan_fails_loudly(cut):
    graphs = {"shape": "a", "mode": "graphs", "hot_reps": 4, "launches": [4, 8, 16, 32]}
    lone = {"shape": "b", "mode": "lone", "hot_reps": 1, "launches": [1]}
    if cut == "short":
        plan, kernels = [graphs], graphs_of(100.0, [4, 8, 16, 32], 2)[:-1]
    elif cut == "extra":
        plan, kernels = [graphs], graphs_of(100.0, [4, 8, 16, 32], 2) + [{"kernel": "graph", "duration": 5.0}]
    elif cut == "not_a_graph":
        kernels = graphs_of(100.0, [4, 8, 16, 32], 2)
        kernels[3] = {"kernel": "flash_fwd", "duration": 100.0}
        plan = [graphs]
    elif cut == "no_separator":
        plan, kernels = [lone], lone_of([[700.0]] * 2)[:-1]
    else:
        plan, kernels = [lone], lone_of([[700.0], []])
    with pytest.raises(ValueError):
        ncu_xval.pair(plan, kernels, replays=2)


def test_lone_fit_and_slope_fit_by_hand():
    fit = ncu_xval.lone_fit([1.0, 2.0, 3.0, 4.0, 100.0])
    assert (fit["per_launch_us"], fit["low_us"], fit["high_us"]) == (3.0, 2.0, 4.0)
    # exact lines: slope 7, every graph's cost 50
    s = ncu_xval.slope_fit([1, 2, 4, 8], [57.0, 64.0, 78.0, 106.0])
    assert s["per_launch_us"] == pytest.approx(7.0) and s["overhead_us"] == pytest.approx(50.0)


def test_the_command_profiles_graphs_as_workloads_only_in_graphs_mode_clocks_and_caches_left_alone():
    g = ncu_xval.ncu_command("ncu", "flash_attn3", "shapes.json", "graphs")
    lone = ncu_xval.ncu_command("ncu", "flash_attn3", "shapes.json", "lone")
    assert "--graph-profiling" in g and "--graph-profiling" not in lone
    for cmd in (g, lone):
        assert cmd[cmd.index("--clock-control") + 1] == "none" and cmd[cmd.index("--cache-control") + 1] == "none"
        assert cmd[cmd.index("--nvtx-include") + 1] == "xval/" and cmd[-3:-1] == ["flash_attn3", "shapes.json"]
        assert cmd[cmd.index("--metrics") + 1] == "gpu__time_duration.sum"


def _summary(rows):
    cols = ["impl", "B", "H", "S", "D", "causal", "H_kv", "dtype", "mode", "median_us", "input_sets"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


def test_the_run_checks_fa3_where_it_has_it_else_cudnn_at_hot_medians_of_100_us_and_more():
    s = _summary([
        ("flash_attn3", 4, 16, 4096, 128, False, 16, "float16", "hot", 787.0, 1),
        ("flash_attn3", 4, 16, 4096, 128, False, 16, "float16", "cold", 800.0, 1),  # not hot
        ("flash_attn3", 64, 16, 256, 64, False, 16, "float16", "hot", 99.9, 2),  # under 100 us
        ("flash_attn3", 64, 16, 256, 128, False, 16, "float16", "hot", 100.0, math.nan),  # 100 us: in, one set
        ("sdpa_cudnn", 4, 16, 4096, 128, False, 16, "float16", "hot", 840.0, 1),
    ])
    impl, shapes = xval_plan(s, ["sdpa_cudnn", "flash_attn3", "sdpa_flash"])
    assert impl == "flash_attn3"
    assert shapes == {Shape(4, 16, 4096, 128, False): 1, Shape(64, 16, 256, 128, False): 1}
    impl, shapes = xval_plan(s, ["sdpa_cudnn"])
    assert impl == "sdpa_cudnn" and shapes == {Shape(4, 16, 4096, 128, False): 1}
    assert xval_plan(s, ["sdpa_flash"]) == (None, {})


class _Data:
    def __init__(self, xval, medians):
        self.ncu_xval, self._medians = xval, medians

    def median(self, impl, shape, mode):
        assert mode == "hot"
        return self._medians.get((impl, shape.spec))


def test_the_reports_table_sets_each_hot_median_against_ncus_time_per_launch():
    from lab.report.tables import NCU_AGREE, ncu_xval_table

    a, b = Shape(4, 16, 4096, 128, False), Shape(1, 16, 16384, 128, False)
    xval = {"impl": "flash_attn3", "rows": [
        {"shape": a.spec, "mode": "graphs", "launches": [2, 2, 4, 4], "per_launch_us": 780.0, "low_us": 778.0,
         "high_us": 782.0},
        {"shape": b.spec, "mode": "lone", "launches": [1] * 8, "per_launch_us": 2960.0, "low_us": 2955.0,
         "high_us": 2966.0}]}
    rows, ratios = ncu_xval_table(_Data(xval, {("flash_attn3", a.spec): 795.0, ("flash_attn3", b.spec): 3046.0}))
    assert ratios == pytest.approx([795.0 / 780.0, 3046.0 / 2960.0])
    assert [abs(r - 1) <= NCU_AGREE for r in ratios] == [True, False]  # 1.019 in, 1.029 out
    assert rows[0][1].startswith("graphs of 2-4 launches") and rows[1][1].startswith("8 lone launches")
    assert rows[1][-1] == "1.029"
