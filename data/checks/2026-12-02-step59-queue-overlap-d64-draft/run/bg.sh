#!/bin/bash
# Step 59's landing call (written 2026-12-02 for the next session): with step59.patch applied and committed (HEAD
# clean), its GPU tests, compute-sanitizer and step 58 against step 53 at the shapes its header predicts for, then,
# only if the tests and the sanitizers pass, one recorded run of `make ablation`'s measuring stages at the defaults,
# in the background (setsid, so that it outlives a call); data/checks/2026-12-02-step54-decode-draft/run/poll.sh's
# later calls wait and bring back the run folder. Before the first call, from the repository root:
#   git apply --index data/checks/2026-12-02-step59-queue-overlap-d64-draft/step59.patch   # then the index entry's
#   steps = [58, 59], make docs, the CPU suite, commit
#   git rev-parse HEAD > .scratch/sha_run
#   cp data/checks/2026-12-02-step59-queue-overlap-d64-draft/run/bg.sh .scratch/bg.sh
#   cp data/checks/2026-12-02-step54-decode-draft/run/poll.sh .scratch/
#   mv data/runs/* /tmp/oldruns/   # so that the tree with .whl, .whl-tuning and .fa3 fits 64 MiB; also the three
#   largest explorations (2026-11-26-models-set-timing-ab, 2026-11-23-softmax-issue, 2026-11-26-models-set-cost)
#   (run, carry .whl .whl-tuning .fa3 .scratch) WAIT=560 bash .scratch/poll.sh, again with WAIT=570 until "all done"
# About 1,250 s of calls and 110 s of the machine's start; about 900 s where the checks are skipped (below).
# Predictions for the timing, written before the call (step 58's time over step 59's, the speedup): as
# ../call.sh's header (the same shapes).
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha_run)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
# ../call/ ran the GPU tests, the sanitizers and the timing on the patch's kernel sources this same day; where the
# committed kernels/ are those sources byte for byte (the hash of every file under kernels/, sorted by path), the
# landing skips them and goes straight to the run, saving about 200 s of device time; else it runs them first.
KERNELS_OF_CALL=36213fe3b249fe13bfc52217dea2b4739e5188358d8dfdff3edaf7d142a51c4c
kernels_now=$(find kernels -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-64)
if [ "$kernels_now" = "$KERNELS_OF_CALL" ]; then
  rc_t=0; rc_s=0; say "kernels/ as ../call/ checked them ($kernels_now): tests, sanitizers and timing not repeated"
else
say "kernels/ differ from ../call/'s ($kernels_now): checks first"
timeout 240 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "queue_overlap_d64" > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
timeout 120 python -m lab sanitize --variants queue_overlap_d64 --tools memcheck,racecheck,synccheck \
  --out /tmp/out/sanitize.json > /tmp/out/log_sanitize.txt 2>&1; rc_s=$?
say "sanitize rc=$rc_s $(( $(date +%s)-T0 )) s"
export EXP_CONFIGS='{"s58": ["finite_max_d64", {}], "s59": ["queue_overlap_d64", {}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "2,32,4096,64,causal",
  "1,32,8192,64,causal", "1,8,16384,64,causal", "8,16,4096,64,causal", "4,16,4096,64", "4,16,4096,128"]'
OUT=/tmp/out timeout 150 python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.5 > /tmp/out/log_time.txt 2>&1
say "time rc=$? $(( $(date +%s)-T0 )) s"
fi
if [ $rc_t -ne 0 ] || [ $rc_s -ne 0 ]; then say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0; fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
