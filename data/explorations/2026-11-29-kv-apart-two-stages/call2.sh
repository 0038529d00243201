# Call 2: step 50 with its loop's bookkeeping made shorter (wait_desc.patch, a draft variant exp_wait_desc, applied to
# this machine's copy only): w the mbarrier wait's retry loop inside its asm (CUTLASS's ClusterBarrier::wait), d the
# D = 128 wgmma descriptors from 32-bit low words, stage 0's plus the stage (FlashAttention-3's form) and q_empty's
# address hoisted. Correctness grid on each, then hot timing against step 50, FA3, cuDNN.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
D=data/explorations/2026-11-29-kv-apart-two-stages
git apply $D/wait_desc.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}], "w": ["exp_wait_desc", {"FA_EXP_ASM_WAIT": 1}],
  "d": ["exp_wait_desc", {"FA_EXP_DESC_BASE": 3, "FA_EXP_QADDR": 1}],
  "wd": ["exp_wait_desc", {"FA_EXP_ASM_WAIT": 1, "FA_EXP_DESC_BASE": 3}],
  "wdq": ["exp_wait_desc", {"FA_EXP_ASM_WAIT": 1, "FA_EXP_DESC_BASE": 3, "FA_EXP_QADDR": 1}]}'
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
  "4,16,4096,64", "4,16,4096,64,causal", "8,16,512,64", "4,71,2048,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16"]'
EXP_ONLY=w,d,wd,wdq timeout 200 python $X/exp.py check > $OUT/check_wait_desc.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check_wait_desc.txt | cut -c1-160 | tail -12
timeout $(( 540 - ($(date +%s)-T0) )) python $X/exp.py time 1.0 > $OUT/time_wait_desc.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-600 $OUT/time_wait_desc.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
