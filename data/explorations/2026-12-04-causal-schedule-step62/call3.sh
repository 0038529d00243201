# Device call 3 of data/explorations/2026-12-04-causal-schedule-step62 (issue 46), run from the repository root with
# carry [".whl", ".fa3"]. Call 2: 32 MB sections with the counter for causal D = 128 (f3) gained 0.5 %, 1.6 %, 1.9 % at
# causal (4, 16, 4096, 128), (2, 16, 8192, 128), (1, 16, 16384, 128) and lost 2.8 % at (16, 16, 1024, 128) and 1.1 % at
# (4, 32, 2048, 128, causal, 8 K/V heads, bf16) (one section instead of two); the three-warpgroup D = 64 tile from
# the counter (k3) gained 1.6 % at Falcon-7B again (1.5 % in call 1), and with 32 MB sections everywhere (f3k3) it
# took the counter at the non-causal (4, 16, 4096, 64) and lost 4 % there. The candidate rule: causal D = 128 launches
# of S >= 4096 keys (FA_EXP_CAUSAL_MIN_S) take 32 MB sections and the counter where the last section holds 3 tiles a
# CTA; every other launch as step 62 (two fifths of the L2, 4 tiles a CTA); plus k3. explore3.patch (on 64ab828) is
# explore2.patch with FA_EXP_CAUSAL_MIN_S. This call times it at every causal row of the study's long and models
# sets, and at 2048 keys (r2048) for the rule's edge.
# Predictions (hot, paired rounds, each over s62), written before the call:
# - r: within 0.005 of call 2's f3 at causal (4, 16, 4096, 128), (2, 16, 8192, 128), (1, 16, 16384, 128)
#   (1.005x, 1.016x, 1.019x); 0.995x-1.01x at the S = 8192 models rows of D = 128 (their sections go from two fifths
#   of the L2 to 32 MB; call 2's f3: 1.002x at (1, 32, 8192, 128, kv8)); 1.01x-1.02x at Falcon-7B S = 8192 (k3);
#   1.000x (within 0.003) at every S <= 2048 row, at GPT-2, and at the non-causal controls;
# - r2048: as r, and 0.98x-1.00x at the S = 2048 models rows of D = 128 and 0.99x-1.01x at (8, 16, 2048, 128, causal);
# - f3 (call 2's, for its replicate): within 0.005 of call 2 at the causal D = 128 rows;
# - all pass the 389-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
N=data/explorations/2026-12-04-causal-schedule-step62
git apply --check -R $N/explore3.patch 2>/dev/null || git apply $N/explore3.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
F='"FA_EXP_SECTION_MB": 32, "FA_EXP_QTPC_D128_ONLY": 1, "FA_EXP_QTPC_CAUSAL": 3'
export EXP_CONFIGS="{\"s62\": [\"rescale_under_s\", {\"FA_EXP_QTPC_CAUSAL\": 4}],
  \"r\": [\"rescale_under_s\", {$F, \"FA_EXP_CAUSAL_MIN_S\": 4096, \"FA_EXP_COUNTER_THREE_WGS\": 1}],
  \"r2048\": [\"rescale_under_s\", {$F, \"FA_EXP_CAUSAL_MIN_S\": 2048, \"FA_EXP_COUNTER_THREE_WGS\": 1}],
  \"f3\": [\"rescale_under_s\", {$F}]}"
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal",
  "8,16,2048,128,causal", "4,32,2048,128,causal,kv8,bf16", "1,32,8192,128,causal,kv8,bf16",
  "4,64,2048,128,causal,kv8,bf16", "1,64,8192,128,causal,kv8,bf16", "4,28,2048,128,causal,kv4,bf16",
  "1,28,8192,128,causal,kv4,bf16", "4,71,2048,64,causal,kv1,bf16", "1,71,8192,64,causal,kv1,bf16",
  "4,12,2048,64,causal,bf16", "1,12,8192,64,causal,bf16", "4,16,4096,64,causal", "4,16,4096,128", "4,16,4096,64"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
