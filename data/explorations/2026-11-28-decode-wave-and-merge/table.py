"""The README's tables from this folder's call records: microseconds (hot medians of 15) and, in brackets,
the bytes a call must move over its time as a fraction of the copy bandwidth of the same call.

    python table.py
"""

import json
from pathlib import Path

HERE = Path(__file__).parent
COLUMNS = [  # (record, implementation, heading)
    ("call1_steps41_42.json", "tensor_map_tiles", "41 (call 1)"),
    ("call1_steps41_42.json", "split_by_efficiency", "42 (call 1)"),
    ("call2_steps42_43.json", "split_by_efficiency", "42 (call 2)"),
    ("call2_steps42_43.json", "cluster_merge", "43 cluster merge"),
    ("call6_steps44_45_promotion.json", "early_merge_launch", "44 merge launched early"),
    ("call6_steps44_45_promotion.json", "no_l2_promotion", "45 no L2 promotion"),
    ("call6_steps44_45_promotion.json", "sdpa_cudnn", "SDPA cuDNN"),
    ("call6_steps44_45_promotion.json", "sdpa_flash", "SDPA flash"),
]
KNOBS = [
    ("call3_steps42_44_within95.json", "split_by_efficiency", "42"),
    ("call3_steps42_44_within95.json", "early_merge_launch", "44"),
    ("call3_steps42_44_within95.json", "early_merge_launch@FA_DECODE_SPLIT_WITHIN_PCT=95", "44, within 95 %"),
    ("call4_step42_ring_depth.json", "split_by_efficiency", "42, 3 stages"),
    ("call4_step42_ring_depth.json", "split_by_efficiency@FA_DECODE_STAGES=4", "42, 4 stages"),
    ("call4_step42_ring_depth.json", "split_by_efficiency@FA_DECODE_STAGES=6", "42, 6 stages"),
    ("call6_steps44_45_promotion.json", "no_l2_promotion@FA_DECODE_L2_PROMOTION=CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
     "45, 128-byte promotion"),
    ("call6_steps44_45_promotion.json", "no_l2_promotion@FA_DECODE_L2_PROMOTION=CU_TENSOR_MAP_L2_PROMOTION_L2_256B",
     "45, 256-byte promotion"),
]


def table(columns) -> str:
    records = {f: json.loads((HERE / f).read_text()) for f, _, _ in columns}
    shapes = [row["shape"] for row in records[columns[0][0]]["timing"]]
    lines = ["| shape | " + " | ".join(h for _, _, h in columns) + " |", "|---|" + "---:|" * len(columns)]
    for shape in shapes:
        cells = []
        for f, impl, _ in columns:
            rec = records[f]
            row = next(r for r in rec["timing"] if r["shape"] == shape)
            us = row["us"].get(impl)
            if isinstance(us, float):
                cells.append(f"{us:.1f} ({row['bytes'] / us / 1e6 / rec['copy']['tb_s']:.2f})")
            else:
                cells.append("not taken")
        lines.append(f"| {shape.removeprefix('decode-').removesuffix('-bf16')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    copies = {f: json.loads((HERE / f).read_text())["copy"]["tb_s"] for f, _, _ in COLUMNS + KNOBS}
    print("copy bandwidth a call (TB/s):", ", ".join(f"{f.split('_')[0]} {v:.2f}" for f, v in sorted(copies.items())))
    print()
    print(table(COLUMNS))
    print()
    print(table(KNOBS))
