#!/bin/bash
# Step 55's landing on a one-GPU machine, drafted 2026-12-02 for the next session (copy to .scratch/ with poll.sh;
# step55.patch applied and committed first, `git rev-parse HEAD > .scratch/sha`): the decode GPU tests of step 55
# and of lab.measure.decode_profile (its first GPU run; the recorded run then profiles the decode set with it),
# memcheck and racecheck over the decode grid, Nsight Compute of both steps at Falcon-7B's batch 64
# (../2026-12-02-step54-decode-draft/prof_decode.py), Falcon-7B's set shapes, a control and four held-out
# wide-group shapes timed against step 54 (../../explorations/2026-12-02-decode-splits/sweep.py), and then, only if the tests and the
# sanitizers pass, one recorded run of `make ablation`'s measuring stages at the defaults, in the background
# (setsid); poll.sh's later calls wait and bring back the run folder.
#
# Predictions, written before the call (the step's header's, and the held-out shapes'): 1.10x-1.20x over step 54 at
# (64, 71, 1, 64, 1024) and (32, 71, 1, 64, 4096, mixed), hot and cold; 0.99x-1.01x at every other set shape; at
# the held-out (32, 71, 1, 64, 1024), (16, 71, 1, 64, 2048), (4, 71, 1, 64, 4096) and (64, 71, 1, 64, 1024, q2)
# 1.00x-1.20x. Nsight Compute at (64, 71, 1, 64, 1024): one kernel of 320 CTAs and no merge (step 54: 256 CTAs
# and a merge kernel).
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha)
D=data/checks/2026-12-02-step55-decode-draft
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
python -c "from lab.kernels.build import build_all; build_all(['chunks_one_cta_an_sm', 'wide_groups_in_row_blocks'])" \
  > /tmp/out/log_build.txt 2>&1
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "wide_groups_in_row_blocks" \
  > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
# the decode profile's GPU test: said, not a gate (a run's profile records a failure and goes on)
timeout 120 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k nsight_compute \
  > /tmp/out/log_gpu_profile_test.txt 2>&1
say "decode profile test rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_profile_test.txt | cut -c1-120)"
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 python $G wide_groups_in_row_blocks > /tmp/out/log_san.txt 2>&1
rc_m=$?
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 python $G wide_groups_in_row_blocks >> /tmp/out/log_san.txt 2>&1
rc_r=$?
say "sanitize memcheck rc=$rc_m racecheck rc=$rc_r $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size
for step in chunks_one_cta_an_sm wide_groups_in_row_blocks; do
  timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
    python data/checks/2026-12-02-step54-decode-draft/prof_decode.py $step 64,71,1,64,1024,bf16 \
    > /tmp/out/ncu_${step}_64_71_1_64_1024_bf16.csv 2>&1
done
say "ncu done $(( $(date +%s)-T0 )) s"
# Falcon-7B's four set shapes, one set shape of the TMA tile as a control (the run times every set shape again)
S="64,71,1,64,1024,bf16 32,71,1,64,4096,mixed,bf16 8,71,1,64,8192,bf16 16,71,1,64,32768,q4,page64,bf16 8,32,8,128,8192,bf16"
SWEEP_MODES=hot,cold timeout 200 python data/explorations/2026-12-02-decode-splits/sweep.py /tmp/out \
  s54=chunks_one_cta_an_sm s55=wide_groups_in_row_blocks -- $S 32,71,1,64,1024,bf16 16,71,1,64,2048,bf16 \
  4,71,1,64,4096,bf16 64,71,1,64,1024,q2,bf16 > /tmp/out/log_sweep.txt 2>&1
say "sweep rc=$? $(( $(date +%s)-T0 )) s"
if [ $rc_t -ne 0 ] || [ $rc_m -ne 0 ] || [ $rc_r -ne 0 ]; then say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0; fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
