#!/bin/bash
# Step 56's landing on a one-GPU machine, drafted 2026-12-02 for the next session (copy to .scratch/ with
# ../../2026-12-02-step54-decode-draft/run/poll.sh; launcher_refactor.patch and step56.patch applied and committed
# first, `git rev-parse HEAD > .scratch/sha`): the decode GPU tests of steps 54-56 (the refactor moved 54's and 55's
# launcher), memcheck and racecheck over the decode grid, Nsight Compute of
# steps 55 and 56 at (8, 71, 1, 64, 8192) (the set shape where step 56 moves the call onto the row blocks), the
# Falcon-7B set shapes, a control and seven held-out wide-group shapes timed against step 55
# (../../explorations/2026-12-02-decode-splits/sweep.py), and then, only if the tests and sanitizers pass and step
# 56 is at least 0.95x step 55 hot at (8, 71, 1, 64, 8192) (the one set-shape launch no forced count measured), one
# recorded run of `make ablation`'s measuring stages at the defaults, in the background (setsid).
#
# Predictions, written before the call (the step's header's): over step 55, 0.85x-0.90x at (32, 71, 1, 64, 4096,
# mixed), 0.95x-1.10x at (8, 71, 1, 64, 8192), 0.99x-1.01x at the other set shapes; held out, 1.20x-1.35x at
# (32, 71, 1, 64, 1024) and (32, 71, 1, 64, 1024, q2), 1.15x-1.30x at (32, 71, 1, 64, 2048), 1.05x-1.15x at
# (64, 71, 1, 64, 1024, q2); (16, 71, 1, 64, 1024) 1.00x-1.10x; (4, 71, 1, 64, 4096) (16 chunks of 256 keys against
# 6 of 704) 0.95x-1.10x; the mixed (16, 71, 1, 64, 4096) 0.85x-1.00x. Nsight Compute at (8, 71, 1, 64, 8192): step
# 56 a main kernel of 360 CTAs and a merge; step 55 the row warps' grid and a merge.
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
python -c "from lab.kernels.build import build_all; build_all(['chunks_one_cta_an_sm', 'wide_groups_in_row_blocks', 'row_blocks_fill_one_wave'])" \
  > /tmp/out/log_build.txt 2>&1
timeout 480 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "chunks_one_cta_an_sm or wide_groups_in_row_blocks or row_blocks_fill_one_wave" \
  > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 python $G row_blocks_fill_one_wave > /tmp/out/log_san.txt 2>&1
rc_m=$?
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 python $G row_blocks_fill_one_wave >> /tmp/out/log_san.txt 2>&1
rc_r=$?
say "sanitize memcheck rc=$rc_m racecheck rc=$rc_r $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size
for step in wide_groups_in_row_blocks row_blocks_fill_one_wave; do
  timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
    python data/checks/2026-12-02-step54-decode-draft/prof_decode.py $step 8,71,1,64,8192,bf16 \
    > /tmp/out/ncu_${step}_8_71_1_64_8192_bf16.csv 2>&1
done
say "ncu done $(( $(date +%s)-T0 )) s"
S="64,71,1,64,1024,bf16 32,71,1,64,4096,mixed,bf16 8,71,1,64,8192,bf16 16,71,1,64,32768,q4,page64,bf16 8,32,8,128,8192,bf16"
H="32,71,1,64,1024,bf16 32,71,1,64,1024,q2,bf16 32,71,1,64,2048,bf16 64,71,1,64,1024,q2,bf16 16,71,1,64,1024,bf16"
H="$H 4,71,1,64,4096,bf16 16,71,1,64,4096,mixed,bf16"
SWEEP_MODES=hot,cold timeout 240 python data/explorations/2026-12-02-decode-splits/sweep.py /tmp/out \
  s55=wide_groups_in_row_blocks s56=row_blocks_fill_one_wave -- $S $H > /tmp/out/log_sweep.txt 2>&1
say "sweep rc=$? $(( $(date +%s)-T0 )) s"
gate=$(python -c "
import json
r = json.load(open('/tmp/out/sweep.json'))
row = [x for x in r['rows'] if x['shape'] == '8,71,1,64,8192,bf16' and x.get('mode', 'hot') == 'hot'][0]['median_us']
print('ok' if row['s55'] / row['s56'] >= 0.95 else 'slow %.3f' % (row['s55'] / row['s56']))" 2>&1)
say "gate at (8, 71, 1, 64, 8192): $gate"
if [ $rc_t -ne 0 ] || [ $rc_m -ne 0 ] || [ $rc_r -ne 0 ] || [ "$gate" != ok ]; then
  say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0
fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
