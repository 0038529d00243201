#!/bin/bash
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
python -c "from lab.kernels.variants import load; load('three_ctas_d64')" 2>&1 | tail -2
M=gpu__time_duration.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for SH in 4,16,4096,128 4,16,4096,64 8,16,512,64; do
  timeout 120 ncu --clock-control none --launch-skip 2 --launch-count 2 -k regex:"attention_fwd|cudnn|sdpa" --metrics $M --csv python .scratch/call11/l2.py $SH > $OUT/ncu_$SH.csv 2>$OUT/ncu_$SH.err
done
python - <<'PY'
import csv, glob, os, io
for f in sorted(glob.glob(os.environ["OUT"] + "/ncu_*.csv")):
    txt = open(f).read(); i = txt.find('"ID"')
    if i < 0: print(f, "no data"); continue
    rows = list(csv.DictReader(io.StringIO(txt[i:])))
    for r in rows:
        print(os.path.basename(f), r["Kernel Name"][:40], r["Metric Name"], r["Metric Value"], r["Metric Unit"])
PY
