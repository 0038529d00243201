"""The README's tables from this folder's call records: microseconds (hot medians of 15, one input set, a
CUDA graph of back-to-back launches) and, in brackets, the bytes a call must move over its time as a
fraction of the copy bandwidth measured in the same call; then Nsight Compute's kernel durations.

    python table.py
"""

import csv
import json
from pathlib import Path

HERE = Path(__file__).parent
COLUMNS = [  # (call, implementation, heading)
    ("call1", "no_l2_promotion", "45 (call 1)"), ("call1", "row_warps", "46 (call 1)"),
    ("call2", "merge_side_by_side", "47, side by side always (call 2)"),
    ("call3", "no_l2_promotion", "45 (call 3)"), ("call3", "row_warps", "46 (call 3)"),
    ("call3", "merge_side_by_side", "47 (call 3)"), ("call3", "sdpa_cudnn", "SDPA cuDNN (call 3)"),
    ("call3", "sdpa_flash", "SDPA flash (call 3)"),
]


def timing_table() -> str:
    records = {c: json.loads((HERE / c / "decode.json").read_text()) for c, _, _ in COLUMNS}
    lines = ["| shape | " + " | ".join(h for _, _, h in COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for i, row in enumerate(records["call3"]["timing"]):
        cells = []
        for call, impl, _ in COLUMNS:
            rec = records[call]
            r = rec["timing"][i]
            assert r["shape"] == row["shape"]
            us = r["us"].get(impl)
            ok = isinstance(us, float)
            cells.append(f"{us:.1f} ({r['bytes'] / us / 1e6 / rec['copy']['tb_s']:.2f})" if ok else "not taken")
        lines.append(f"| {row['shape']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ncu_durations(call: str) -> list:
    """(section, kernel, ns) of each gpu__time_duration / Duration row of a call's ncu.csv."""
    out, section, header = [], "", []
    for line in (HERE / call / "ncu.csv").read_text().splitlines():
        if line.startswith("== "):
            section = line[3:]
            continue
        if not line.startswith('"'):
            continue
        r = next(csv.reader([line]))
        if r[0] == "ID":
            header = r
            continue
        row = dict(zip(header, r))
        if row["Metric Name"] in ("gpu__time_duration.sum", "Duration"):
            kernel = row["Kernel Name"].split("(")[0].replace("void <unnamed>::", "").replace("void unnamed>::", "")
            scale = 1000.0 if row["Metric Unit"] in ("usecond", "us") else 1.0
            out.append((section, kernel, float(row["Metric Value"].replace(",", "")) * scale))
    return out


if __name__ == "__main__":
    print(timing_table())
    for call in ("call1", "call2"):
        print(f"\n{call}: Nsight Compute durations (ns)")
        for section, kernel, ns in ncu_durations(call):
            print(f"- {section}: {kernel} {ns:,.0f}")
