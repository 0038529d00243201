# Issue 46, after data/explorations/2026-11-29-stall-sources: the D = 64 three-warpgroup tiles (kinds 3 and 4) with the
# overlapped loop (S_{j+1} in flight during the softmax of j), made spill-free by P through shared memory (stage_p:
# 64 x 128 a warpgroup, K-major A layout; O += P V as an SS wgmma with an MN-major V), both tiles at 160 registers a
# consumer. Step 52's twin with p_smem.patch applied (FA_EXP_P_SMEM_D64 = 1), against step 52. carry [".whl", ".fa3"].
#
# Predictions, written before the call (p_smem's speedup over step 52, hot; time.txt's ratios are s52's time over
# the other's, so the speedup is that ratio itself):
#   (4, 16, 4096, 64) and (2, 16, 8192, 64) non-causal: 1.02x-1.08x (the 19 % of samples at wgmma waits mostly
#   hidden, against 32 shared stores a thread a tile and a warpgroup barrier);
#   (4, 16, 4096, 64, causal), (1, 16, 16384, 64, causal): 1.02x-1.08x;
#   GPT-2 (1, 12, 8192, causal, bf16) and Falcon-7B (1, 71, 8192, causal, kv1, bf16): 1.02x-1.06x;
#   D = 128 (4, 16, 4096, 128): 0.99x-1.01x (untouched).
# The correctness grid (376 cases, fp32 reference, poisoned outputs, every element) runs first on both.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s52": ["three_wgs_queue_causal_d64", {}], "p_smem": ["three_wgs_queue_causal_d64", {"FA_EXP_P_SMEM_D64": 1}]}'
export EXP_SHAPES='["4,16,4096,64", "2,16,8192,64", "4,16,4096,64,causal", "1,16,16384,64,causal",
  "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "4,16,4096,128"]'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -12
timeout $(( 215 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
