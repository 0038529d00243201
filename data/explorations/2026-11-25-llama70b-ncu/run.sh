#!/bin/bash
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
python -c "from lab.kernels.variants import load; load('warp_release_d64')" 2>&1 | tail -2
echo "built at $((SECONDS-T0)) s"
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum,sm__cycles_active.avg,sm__cycles_elapsed.max
for SH in 1,64,8192,128,8 1,32,8192,128,8; do
  timeout 90 ncu --clock-control none --launch-skip 2 --launch-count 2 -k regex:"attention_fwd|cudnn|sdpa|sm90" --metrics $M --csv python data/explorations/2026-11-25-llama70b-ncu/one.py $SH > $OUT/ncu_${SH//,/_}.csv 2>$OUT/ncu_${SH//,/_}.err
  echo "$SH at $((SECONDS-T0)) s"
done
python - <<'PY'
import csv, glob, os, io
for f in sorted(glob.glob(os.environ["OUT"] + "/ncu_*.csv")):
    txt = open(f).read(); i = txt.find('"ID"')
    if i < 0: print(f, "no data"); continue
    for r in csv.DictReader(io.StringIO(txt[i:])):
        print(os.path.basename(f)[4:-4], r["Kernel Name"][:28], r["Metric Name"], r["Metric Value"], r["Metric Unit"])
PY
