"""The profile stage's Nsight Compute duration (one launch, --clock-control none, caches flushed) beside the
run's hot median, for every implementation the stage profiled with a hot median of 50 us or more: is a
hot median below ncu's duration peculiar to FlashAttention-3, or the method's?

    PYTHONPATH=. python data/checks/2026-11-27-h100-fa3-sustained-run/profile_vs_hot.py > profile_vs_hot.txt
"""
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import records
from lab.report.load import RunData

RUN = "20261127T200255Z-9d5873b"

if __name__ == "__main__":
    data = RunData(records.RunRecord.open(RUN))
    prof = pd.read_csv(f"data/runs/{RUN}/profile.csv")
    rows = []
    for _, r in prof[prof.ok == True].iterrows():  # noqa: E712 - a pandas mask
        shape = Shape.from_row(r)
        hot = data.median(r.impl, shape, "hot")
        if hot and r.duration and hot >= 50:
            rows.append((shape.id, r.impl, hot, r.duration, hot / r.duration))
    df = pd.DataFrame(rows, columns=["shape", "impl", "hot_us", "ncu_us", "hot_over_ncu"])
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 400)
    print(f"# run {RUN}: hot median / ncu duration per implementation the profile stage profiled\n")
    print(df.groupby("shape").hot_over_ncu.describe().round(3).to_string(), "\n")
    print(df.sort_values(["shape", "hot_over_ncu"]).round(3).to_string(index=False))
