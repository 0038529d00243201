"""The report's "Burst and sustained" section (lab.report.sections.sustained) on a synthetic run: the
medians in both modes, the order of the implementations and where it changes, the headline end's
speedups in both, the sustained ratios' calibration; and no section for a run without the mode."""

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import records
from lab.report.context import Context
from lab.report.load import RunData
from lab.report.sections.sustained import ranking_changes, section_sustained

from tests.ladder import SM90_END as END, SM90_END_PARENT as PARENT  # the sm_90a end and its parent
SHAPE = Shape(4, 16, 4096, 128, False)
# true latencies (us): hot, sustained. FA3 is the fastest in both; cuDNN is ahead of the end hot, behind it sustained
TRUE = {END: (870.0, 990.0), PARENT: (880.0, 980.0), "sdpa_cudnn": (830.0, 1010.0), "flash_attn3": (770.0, 910.0)}


def _run(root, modes=("hot", "sustained"), spread=0.004, true=None, factors=None, turn_clocks=None):
    """A run of TRUE's (or `true`'s) latencies, each replicate's off by its own factor (`factors`: impl ->
    {mode: three factors}) or by noise of `spread`; `turn_clocks` (impl -> MHz): the sustained turns' mean clock
    (sm_clock_mean_mhz; none without it, as in runs before 2026-12-05)."""
    true = true or TRUE
    rng = np.random.default_rng(1)
    rec = records.RunRecord("20990105T000000Z-sus", root=root)
    rec.write_json("params.json", {"variants": [PARENT, END], "modes": list(modes), "backends": ["cudnn"],
                                   "shapes": [list(SHAPE.astuple())], "replicates": 3})
    rows = []
    for mode in modes:
        for r in range(3):
            for rnd in range(4):
                for impl, (hot, sus) in true.items():
                    f = (factors or {}).get(impl, {}).get(mode)
                    base = (hot if mode == "hot" else sus) * (f[r] if f else np.exp(rng.normal(0, spread)))
                    for i in range(10):
                        rows.append(dict(run_id=rec.run_id, impl=impl, B=4, H=16, S=4096, D=128, causal=False, H_kv=16,
                                         dtype="float16", mode=mode, sample=rnd * 10 + i,
                                         latency_us=base * np.exp(rng.normal(0, 0.002)),
                                         sm_clock_mhz=1980.0 if mode == "hot" else 1600.0, throttled=False,
                                         replicate=r, round=rnd, power_w=None if mode == "hot" else 690.0,
                                         sm_clock_mean_mhz=(turn_clocks or {}).get(impl) if mode == "sustained"
                                         else None))
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    return rec


def test_the_section_shows_both_modes_the_order_and_where_it_changes(tmp_path):
    data = RunData(_run(tmp_path))
    assert data.modes == ["hot"] and data.sustained_shapes == [SHAPE]  # the burst tables stay hot only
    changes, swaps = ranking_changes(data, SHAPE, list(TRUE))
    assert changes == [f"sdpa_cudnn ahead of {END} hot, behind it sustained",
                       f"sdpa_cudnn ahead of {PARENT} hot, behind it sustained"]
    # the end 1.1 % ahead of its parent hot and 1 % behind sustained: the sustained interval holds 1
    assert len(swaps) == 1 and swaps[0].startswith(f"{END} ahead of {PARENT} hot, behind it sustained (")
    text = "\n".join(section_sustained(Context.of(data, tmp_path / "reports")))
    assert "## Burst and sustained" in text
    table = [ln for ln in text.splitlines() if ln.startswith("| ") and "µs" not in ln and "---" not in ln]
    assert [ln.split("|")[1].strip() for ln in table] == ["flash_attn3", PARENT, END, "sdpa_cudnn"]
    fa3 = table[0].split("|")
    assert fa3[3].strip() == "1980" and fa3[5].strip() == "1600 / 690 W"
    assert abs(float(fa3[6]) - 910 / 770) < 0.02
    end_vs_cudnn = text.split(f"{END} against each")[1].split("sdpa_cudnn: hot ")[1]
    hot, sus = end_vs_cudnn.split(", sustained ")
    assert float(hot.split("×")[0]) < 1 < float(sus.split("×")[0])
    assert "Where the order changes (both intervals clear of 1, on opposite sides): sdpa_cudnn ahead of" in text
    assert "**Calibration of the sustained ratios (leave one replicate out).** Over the 3 ratios above" in text


def test_no_section_without_the_mode(tmp_path):
    data = RunData(_run(tmp_path, modes=("hot",)))
    assert data.sustained_shapes == [] and section_sustained(Context.of(data, tmp_path / "reports")) == []


def test_a_swap_within_the_noise_is_not_called_a_change(tmp_path):
    """Two rows 0.2 % apart that swap places between the modes while their replicates differ by 1 %: the
    speedup's intervals hold 1 in both modes, so the swap is said, with the intervals, and not called a
    change."""
    true = {END: (870.0, 990.0), PARENT: (872.0, 988.0), "flash_attn3": (770.0, 910.0)}
    factors = {END: {"hot": (1.0, 1.01, 0.99), "sustained": (1.0, 0.99, 1.01)}}
    data = RunData(_run(tmp_path, true=true, factors=factors, spread=0.0))
    changes, swaps = ranking_changes(data, SHAPE, list(true))
    assert changes == [] and len(swaps) == 1 and swaps[0].startswith(f"{END} ahead of {PARENT} hot, behind it sustained (")


def test_the_turns_mean_clocks_split_a_sustained_speedup_into_clock_and_cycles(tmp_path):
    """The end at 990 us and 1500 MHz, FA3 at 910 us and 1580 MHz (its one reading a turn: 1600): the end's clock
    1500 / 1580 = 0.949x FA3's, its cycles a launch (990 x 1500) / (910 x 1580) = 1.033x; the table shows the turns'
    mean clocks."""
    clocks = {END: 1500.0, PARENT: 1520.0, "sdpa_cudnn": 1650.0, "flash_attn3": 1580.0}
    text = "\n".join(section_sustained(Context.of(RunData(_run(tmp_path, turn_clocks=clocks)), tmp_path / "reports")))
    assert "sustained SM MHz (a turn's mean) / power" in text
    table = [ln for ln in text.splitlines() if ln.startswith("| ") and "µs" not in ln and "---" not in ln]
    assert [ln.split("|")[5].strip() for ln in table] == ["1580 / 690 W", "1520 / 690 W", "1500 / 690 W",
                                                           "1650 / 690 W"]
    fa3 = text.split(f"{END} against each")[1].split("flash_attn3: hot ")[1].split(";")[0]
    clock, cycles = fa3.split("(its clock ")[1].split("×, its cycles a launch ")
    assert clock == f"{1500 / 1580:.3f}" and abs(float(cycles.split("×")[0]) - 990 * 1500 / (910 * 1580)) < 0.006
    assert cycles.endswith("× flash_attn3's)")
    plain = "\n".join(section_sustained(Context.of(RunData(_run(tmp_path / "plain")), tmp_path / "reports")))
    assert "its clock" not in plain and "a turn's mean" not in plain  # runs without the turns' clocks: as before
    assert "| 1600 / 690 W |" in plain  # there the one reading a turn
