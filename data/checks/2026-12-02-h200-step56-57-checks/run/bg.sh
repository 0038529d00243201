#!/bin/bash
# Steps 56 and 57's checks on one GPU, after the launcher fix (80559ac: the launch binds the plan workspace_bytes
# sized; the first landing call of ../../2026-12-02-step57-decode-draft/run/bg.sh stopped in its sweep on step 56's
# cudaErrorInvalidValue at (32, 71, 1, 64, 4096, mixed), first log in ../call0). The same checks as that script
# (the decode GPU tests of steps 54-57, memcheck and racecheck over the decode grid on 56 and 57, Nsight Compute, the
# sweep of 55, 56 and 57 against SDPA hot and cold, the two gates) without its recorded run: too little device time
# is left in this session for one (about 1,060 s with the machine's start); the next session lands both steps with a
# run. Its predictions are that script's header's, written before either call. From the repository root:
#   cp data/checks/2026-12-02-h200-step56-57-checks/run/bg.sh data/checks/2026-12-02-step54-decode-draft/run/poll.sh .scratch/
#   (run, carry .whl .whl-tuning .scratch) WAIT=560 bash .scratch/poll.sh
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0
E=data/checks/2026-12-02-step57-decode-draft
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
STEPS="chunks_one_cta_an_sm wide_groups_in_row_blocks row_blocks_fill_one_wave tensor_maps_prefetched"
python -c "from lab.kernels.build import build_all; build_all('$STEPS'.split())" > /tmp/out/log_build.txt 2>&1
timeout 480 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "${STEPS// / or }" \
  > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
rc_s=0
for step in row_blocks_fill_one_wave tensor_maps_prefetched; do
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 python $G $step >> /tmp/out/log_san.txt 2>&1 || rc_s=1
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 python $G $step >> /tmp/out/log_san.txt 2>&1 || rc_s=1
done
say "sanitize (memcheck, racecheck; steps 56, 57) rc=$rc_s $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size
for run in wide_groups_in_row_blocks:8,71,1,64,8192,bf16 row_blocks_fill_one_wave:8,71,1,64,8192,bf16 \
           tensor_maps_prefetched:8,71,1,64,8192,bf16 row_blocks_fill_one_wave:64,32,8,128,1024,bf16 \
           tensor_maps_prefetched:64,32,8,128,1024,bf16; do
  step=${run%%:*}; shape=${run#*:}
  timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
    python data/checks/2026-12-02-step54-decode-draft/prof_decode.py $step $shape \
    > /tmp/out/ncu_${step}_${shape//,/_}.csv 2>&1
done
say "ncu done $(( $(date +%s)-T0 )) s"
S="64,71,1,64,1024,bf16 32,71,1,64,4096,mixed,bf16 8,71,1,64,8192,bf16 16,71,1,64,32768,q4,page64,bf16"
S="$S 64,32,8,128,1024,bf16 64,64,8,128,1024,bf16 64,28,4,128,1024,bf16 8,32,8,128,8192,bf16 1,32,8,128,131072,bf16"
H="32,71,1,64,1024,bf16 32,71,1,64,1024,q2,bf16 32,71,1,64,2048,bf16 64,71,1,64,1024,q2,bf16 16,71,1,64,1024,bf16"
H="$H 4,71,1,64,4096,bf16 16,71,1,64,4096,mixed,bf16"
SWEEP_MODES=hot,cold timeout 300 python data/explorations/2026-12-02-decode-splits/sweep.py /tmp/out \
  s55=wide_groups_in_row_blocks s56=row_blocks_fill_one_wave s57=tensor_maps_prefetched -- $S $H \
  > /tmp/out/log_sweep.txt 2>&1
say "sweep rc=$? $(( $(date +%s)-T0 )) s"
gates=$(python - <<'PY' 2>&1
import json, math
r = json.load(open("/tmp/out/sweep.json"))
hot = [x["median_us"] for x in r["rows"] if x.get("mode", "hot") == "hot"]
falcon = [x["median_us"] for x in r["rows"] if x["shape"] == "8,71,1,64,8192,bf16" and x.get("mode", "hot") == "hot"][0]
g56 = falcon["s55"] / falcon["s56"]
g57 = math.exp(sum(math.log(m["s56"] / m["s57"]) for m in hot) / len(hot))
print(("ok" if g56 >= 0.95 else "slow") + f" {g56:.3f}", ("ok" if g57 >= 0.995 else "slow") + f" {g57:.4f}")
PY
)
say "gates: step 56 at (8, 71, 1, 64, 8192) hot, step 57 geomean hot: $gates"
say "all done"; touch /tmp/out/done
