#!/bin/bash
# First read of step 35 on an H200 (issue 22's target 4 there): one-run A/B at the ten models shapes,
# hot and cold, step 34 and step 35 against cuDNN (the fastest peer at every models shape on the H100).
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-26-longest-first-queue
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt
python -m lab build --variants warp_release_d64,longest_first_queue > $OUT/build.txt 2>&1; echo "built at $((SECONDS-T0)) s"
timeout 90 python -m lab check --variants longest_first_queue --quick > $OUT/smoke.txt 2>&1; tail -n 3 $OUT/smoke.txt
# explicit shapes (the ladder's scope): under the models set's scope step 34, not a branch end, is left out
S="4,32,2048,128,causal,kv8,bf16;1,32,8192,128,causal,kv8,bf16;4,64,2048,128,causal,kv8,bf16;1,64,8192,128,causal,kv8,bf16"
S="$S;4,28,2048,128,causal,kv4,bf16;1,28,8192,128,causal,kv4,bf16;4,71,2048,64,causal,kv1,bf16;1,71,8192,64,causal,kv1,bf16"
S="$S;4,12,2048,64,causal,bf16;1,12,8192,64,causal,bf16"
mkdir -p data/runs; before=$(ls data/runs | tail -1)
timeout -k 10 $((540-SECONDS+T0)) python -m lab.pipeline --no-report --shapes "$S" --modes hot,cold \
  --variants warp_release_d64,longest_first_queue --peers sdpa_cudnn --knockouts 0 --profile 0 --check none \
  > $OUT/ab_log.txt 2>&1
echo "A/B rc=$? at $((SECONDS-T0)) s"; tail -n 2 $OUT/ab_log.txt
after=$(ls data/runs | tail -1)
if [ "$after" != "$before" ]; then tar czf $OUT/run.tgz -C data/runs "$after"; python $X/ab.py "$after" | tee $OUT/ab.txt; fi
echo "done at $((SECONDS-T0)) s"
