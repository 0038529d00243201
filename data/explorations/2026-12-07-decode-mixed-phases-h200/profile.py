"""Nsight Compute over one call of the decode end and of SDPA's cuDNN backend at each shape given, and the copy
bandwidth of this process: each call's kernels one by one (name, µs, DRAM bytes, DRAM throughput % of peak, the
SMs' mean active cycles over the busiest SM's), so that the split kernel and the merge after it read apart, and each
call's bytes over its kernels' time against the copy.

    python profile.py OUT shape shape ...       (from the repository root, after diag_patch.py: its switches off)
"""
import json
import sys
from pathlib import Path

from lab.kernels.decode import DecodeShape
from lab.measure import decode_profile
from lab.measure.decode_profile import profile_decode_shapes
from lab.measure.ncu_metrics import METRICS, parse_ncu_csv, plain_number
from lab.measure.profile import split_at_separators
from lab.studies.measure_decode import copy_bandwidth

END, PEER = "persistent_decode_ctas", "sdpa_cudnn"
# The SMs' active cycles too (mean and most): their ratio says how evenly the kernel's work spread over the SMs.
decode_profile.DECODE_METRICS.update({k: METRICS[k] for k in ("sm_cycles_active_avg", "sm_cycles_active_max")})
out, specs = Path(sys.argv[1]), sys.argv[2:]
copy = copy_bandwidth()
records = profile_decode_shapes([(s, [END, PEER]) for s in specs], out)
csvs = {r["csv_path"] for r in records if r.get("csv_path")}
kernels = {path: split_at_separators(parse_ncu_csv(Path(path).read_text())) for path in csvs}
print(f"copy {copy['gbps']:.0f} GB/s")
for r in records:
    if not r["ok"]:
        print(f"{r['shape']} {r['impl']}: not profiled: {r['reason']}")
        continue
    parts = kernels.get(r["csv_path"]) or []
    names = [(r2["shape"], r2["impl"]) for r2 in records if r2.get("csv_path") == r["csv_path"]]
    mine = parts[names.index((r["shape"], r["impl"]))] if len(parts) == len(names) else []
    r["kernels"] = [{"kernel": str(k.get("kernel", ""))[:90], "us": plain_number(k.get("duration")),
                     "dram_bytes": plain_number(k.get("dram_bytes")),
                     "dram_pct": plain_number(k.get("dram_throughput_pct")),
                     "sm_balance": plain_number(k.get("sm_active_balance"))} for k in mine]
    moved = DecodeShape.parse(r["shape"]).bytes_moved()
    of_copy = moved / (r["duration_us"] * 1e3) / copy["gbps"] if r["duration_us"] else float("nan")
    print(f"{r['shape']} {r['impl']}: {r['duration_us']:.1f} us in {r['n_kernels']} kernels, "
          f"{of_copy:.3f} of the copy over the kernels' time")
    for k in r["kernels"]:
        print(f"    {k['us'] or 0:.2f} us  {k['dram_bytes'] or 0:>12,.0f} B  {k['dram_pct'] or 0:5.1f} %  "
              f"SM balance {k['sm_balance'] or 0:.3f}  {k['kernel']}")
json.dump({"copy": copy, "records": records}, open(out / "profile.json", "w"), indent=1)
