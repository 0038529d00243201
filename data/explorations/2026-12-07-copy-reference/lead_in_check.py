"""Call 4 of this exploration: lab.studies.measure_decode.copy_bandwidth with its lead-in (COPY_LEAD_IN_US), right
after the decode end's 15 grid checks, three times; then fresh in a child process. The bar should read as the
fresh child's, within 1 %, with the lead-in's slowest samples at the slow state's 2,580-2,590 GB/s (on an H100).

    python lead_in_check.py OUT
"""
import json
import subprocess
import sys

from lab.measure.decode_check import decode_grid
from lab.studies import decode_study
from lab.studies.measure_decode import copy_bandwidth

out = sys.argv[1]
end = decode_study.branch_end()
fn = decode_study.gpu_build([end], print)[end][0]
rows = []
for k in range(3):
    for i, s in enumerate(decode_grid()):
        decode_study.gpu_check(end, fn, s, i)
    rows.append(copy_bandwidth())
    lead = rows[-1]["lead_in"]
    print(f"after the checks ({k + 1}): {rows[-1]['gbps']:.0f} GB/s; lead-in of {lead['samples']}: slowest "
          f"{lead['slowest_gbps']:.0f}, median {lead['median_gbps']:.0f}", flush=True)
child = subprocess.run([sys.executable, "-c", "from lab.studies.measure_decode import copy_bandwidth as c; "
                        "print(c()['gbps'])"], capture_output=True, text=True)
print(f"fresh child process: {child.stdout.strip()} {child.stderr[-300:]}", flush=True)
json.dump({"after_checks": rows, "child_gbps": float(child.stdout.strip() or "nan")},
          open(f"{out}/lead_in_check.json", "w"), indent=1)
