#!/bin/bash
# ncu at Llama-3-70B (1, 64, 8192, 128, kv8) and Llama-3-8B (1, 32, 8192, 128, kv8): step 34, step 35,
# cuDNN, the third round of launches of each (as ../2026-11-25-llama70b-ncu/run.sh did for step 34).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
python -c "from lab.kernels.variants import load; load('warp_release_d64'); load('longest_first_queue')" 2>&1 | tail -2
echo "built at $((SECONDS-T0)) s"
M=gpu__time_duration.sum,launch__grid_size,lts__t_bytes.sum,dram__bytes_read.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
for SH in 1,64,8192,128,8 1,32,8192,128,8; do
  timeout 120 ncu --clock-control none --launch-skip 6 --launch-count 3 -k regex:"attention_fwd|cudnn|sdpa|sm90" --metrics $M --csv python data/explorations/2026-11-26-longest-first-queue/one.py $SH > $OUT/ncu_${SH//,/_}.csv 2>$OUT/ncu_${SH//,/_}.err
  echo "$SH at $((SECONDS-T0)) s"
done
python - <<'PY'
import csv, glob, io, os
for f in sorted(glob.glob(os.environ["OUT"] + "/ncu_*.csv")):
    txt = open(f).read(); i = txt.find('"ID"')
    if i < 0:
        print(f, "no data"); continue
    rows = {}
    for r in csv.DictReader(io.StringIO(txt[i:])):
        row = rows.setdefault(r["ID"], {"name": r["Kernel Name"][:40]})
        row[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        row[r["Metric Name"] + " unit"] = r["Metric Unit"]
    for k, r in rows.items():
        tail = r["sm__cycles_elapsed.max"] / r["sm__cycles_active.avg"] - 1
        print(f"{os.path.basename(f)[4:-4]} {r['name']:40s} {r['gpu__time_duration.sum']:>10.1f} {r['gpu__time_duration.sum unit']} grid {r['launch__grid_size']:.0f} "
              f"active avg {r['sm__cycles_active.avg']:.4g} max {r['sm__cycles_active.max']:.4g} elapsed max {r['sm__cycles_elapsed.max']:.4g} "
              f"last SM over the mean {100 * tail:.1f} % L2 {r['lts__t_bytes.sum'] / 1e9:.2f} GB DRAM {r['dram__bytes_read.sum'] / 1e6:.0f} MB")
PY
