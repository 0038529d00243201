# Device call 5 of data/explorations/2026-12-04-causal-schedule-step62 (issue 46), run from the repository root with
# carry [".whl", ".fa3"]: call 4's q4 again on another GPU, at more causal D = 64 rows, timing only (q4 passed the
# 389-case grid in call 4). Call 4: q4 (the D = 64 models rows on step 52's tile from the counter instead of step 51's
# static three-warpgroup tile) 1.0785x at Falcon-7B (1, 71, 8192, 64, causal, 1 K/V head, bf16) and 1.0514x at GPT-2
# (1, 12, 8192, 64, causal, bf16), where FA3 was 1.0659x / 1.0428x: past FA3 at both.
# Predictions (hot, paired rounds, over s62), written before the call: q4 1.06x-1.09x at Falcon-7B, 1.035x-1.065x at
# GPT-2, 1.03x-1.09x at (1, 71, 4096, 64, causal, 1 K/V head, bf16) and (2, 12, 8192, 64, causal, bf16) if they
# take step 51's tile today (else 1.00x); 1.00x (within 0.003) at (4, 71, 2048, 64, causal, 1 K/V head, bf16)
# (S < 4096: neither three-warpgroup tile) and at (4, 16, 4096, 64, causal) (step 52's tile already).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
N=data/explorations/2026-12-04-causal-schedule-step62
git apply --check -R $N/explore3.patch 2>/dev/null || git apply $N/explore3.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s62": ["rescale_under_s", {"FA_EXP_QTPC_CAUSAL": 4}],
  "q4": ["rescale_under_s", {"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 101, "FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64": 2,
         "FA_EXP_QTPC_CAUSAL": 3}]}'
export EXP_SHAPES='["1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "1,71,4096,64,causal,kv1,bf16",
  "2,12,8192,64,causal,bf16", "4,71,2048,64,causal,kv1,bf16", "4,16,4096,64,causal"]'
timeout 100 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
