#!/bin/bash
# Step 54's landing on a one-GPU machine, drafted 2026-12-02 for the next session (copy to .scratch/ with poll.sh;
# step54.patch applied and committed first, `git rev-parse HEAD > .scratch/sha`): the decode GPU tests of steps 44-47
# and 54 (the patch moves 44-47's kernels into headers, byte-identical SASS),
# memcheck and racecheck over the decode grid, Nsight Compute of its hypothesis metric (prof_decode.py), the set
# timed against step 47 (the exploration's sweep.py), and then, only if the tests and the sanitizers pass, one
# recorded run of `make ablation`'s measuring stages at the defaults, in the background (setsid); poll.sh's later
# calls wait and bring back the run folder.
#
# Predictions, written before the call (the step's header): 1.02x-1.10x over step 47 at (8, 32 | 64, 8, 128, 8192),
# (8, 28, 4, 128, 8192), (1, 32, 8, 128, 131072) and (8, 64, 8, 128, 131072), hot and cold; 0.99x-1.01x at every
# other decode set shape; at (8, 28, 4, 128, 8192) and (1, 32, 8, 128, 131072) the split kernel's DRAM throughput up
# by about its speedup, the merge's time down with the chunks halved. The decode stage of the run: about 38 s.
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha)
D=data/checks/2026-12-02-step54-decode-draft
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
python -c "from lab.kernels.build import build_all; build_all(['early_merge_launch', 'no_l2_promotion', 'row_warps', 'merge_side_by_side', 'chunks_one_cta_an_sm'])" \
  > /tmp/out/log_build.txt 2>&1
# every decode step whose source the patch touched (steps 44-47 now include the kernels from fa/ headers)
timeout 400 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py \
  -k "early_merge_launch or no_l2_promotion or row_warps or merge_side_by_side or chunks_one_cta_an_sm" \
  > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 python $G chunks_one_cta_an_sm > /tmp/out/log_san.txt 2>&1
rc_m=$?
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 python $G chunks_one_cta_an_sm >> /tmp/out/log_san.txt 2>&1
rc_r=$?
say "sanitize memcheck rc=$rc_m racecheck rc=$rc_r $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size
for shape in 8,28,4,128,8192,bf16 1,32,8,128,131072,bf16; do
  for step in merge_side_by_side chunks_one_cta_an_sm; do
    timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
      python $D/prof_decode.py $step $shape > /tmp/out/ncu_${step}_${shape//,/_}.csv 2>&1
  done
done
say "ncu done $(( $(date +%s)-T0 )) s"
S=$(python -c "from lab.studies.shapes import decode_shapes; print(' '.join(s.spec for s in decode_shapes()))")
SWEEP_MODES=hot,cold timeout 200 python data/explorations/2026-12-02-decode-splits/sweep.py /tmp/out \
  s47=merge_side_by_side s54=chunks_one_cta_an_sm -- $S > /tmp/out/log_sweep.txt 2>&1
say "sweep rc=$? $(( $(date +%s)-T0 )) s"
if [ $rc_t -ne 0 ] || [ $rc_m -ne 0 ] || [ $rc_r -ne 0 ]; then say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0; fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
