#!/bin/bash
# Nsight Compute, one launch each of base / mc2 / cl2 at (4, 16, 4096, 64) and (8, 16, 512, 64).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
D=data/explorations/2026-11-25-d64-multicast/call4-ncu
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/34_warp_release_d64.cu"#\#twin#' kernels/variants/manifest.toml
python $D/launch.py 1,1,128,64 2>&1 | tail -3   # builds outside ncu
M=gpu__time_duration.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size
for SH in 4,16,4096,64 8,16,512,64; do
  timeout 100 ncu --clock-control none -k regex:attention_fwd --metrics $M --csv python $D/launch.py $SH > $OUT/ncu_$SH.csv 2>$OUT/ncu_$SH.err
done
python - <<'PY'
import csv, glob, os, io
for f in sorted(glob.glob(os.environ["OUT"] + "/ncu_*.csv")):
    txt = open(f).read(); i = txt.find('"ID"')
    if i < 0: print(f, "no data"); continue
    for r in csv.DictReader(io.StringIO(txt[i:])):
        print(os.path.basename(f), ["base", "mc2", "cl2"][int(r["ID"]) % 3], r["Metric Name"], r["Metric Value"], r["Metric Unit"])
PY
