# Step 59's metric before it lands (2026-12-02): Nsight Compute, one launch each, step 58 against step 59 (the patch on
# the device copy) at (4, 16, 4096, 64, causal), the judged shape, then (2, 16, 8192, 64, causal) if time is left.
# Predictions, written before the call: the barrier stalls (warps per issue, the manifest's metric) down 10-40 % at
# both shapes; instructions executed within 3 %; step 59's kernel time 1.005x-1.02x shorter.
C=data/checks/2026-12-02-step59-queue-overlap-d64-draft
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply $C/step59.patch || { echo "patch does not apply"; exit 1; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > $OUT/gpu.txt
export EXP_CONFIGS='{"s58": ["finite_max_d64", {}], "s59": ["queue_overlap_d64", {}]}'
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_active.avg
for r in barrier wait long_scoreboard short_scoreboard math_pipe_throttle; do
  M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
T0=$(date +%s)
for shape in 4,16,4096,64,causal 2,16,8192,64,causal; do for c in s58 s59; do
  [ $(( $(date +%s)-T0 )) -lt ${TOTAL:-150} ] && timeout 70 $NCU --clock-control none --nvtx --nvtx-include profile/ \
    --metrics $M --csv --page raw --print-units base python data/explorations/2026-11-29-q-double-buffer/prof_one.py \
    $c $shape > $OUT/ncu_${c}_${shape//,/_}.csv 2>&1
  echo "ncu $c $shape rc=$? $(( $(date +%s)-T0 )) s"; done; done
python - $OUT/ncu_*.csv <<'PY'
import csv, sys
for path in sys.argv[1:]:
    header = None
    for f in csv.reader(l for l in open(path) if l.startswith('"')):
        if f and f[0] == "ID": header = f
        elif header and len(f) == len(header) and f[0].strip().isdigit():
            r = dict(zip(header, f))
            keep = {k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""): v
                    for k, v in r.items() if k.startswith(("gpu__time", "smsp__inst", "sm__cycles", "smsp__average"))}
            print(path.split("/")[-1], " ".join(f"{k}={v}" for k, v in keep.items()))
PY
