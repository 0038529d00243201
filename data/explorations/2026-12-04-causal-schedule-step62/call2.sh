# Device call 2 of data/explorations/2026-12-04-causal-schedule-step62 (issue 46), run from the repository root with
# carry [".whl", ".fa3"]. Call 1: every causal launch from the counter (c0) lost 0.6-4.3 % at the causal D = 128 rows
# and 12 % at (8, 16, 512, 64, causal); with fewer, larger sections (c0e) it gained 1.2 % at (1, 16, 16384, 128,
# causal), where its last section held 4 heads, 512 tiles (the H200's 60 MB L2: c0's last section held 128 tiles);
# the three-warpgroup tile from the counter (k3) gained 1.5 % at Falcon-7B, lost 0.8 % at GPT-2 (c0k3).
# So the counter's tail wants a big last section. FA3 sizes its sections by 32 MB of K/V: at D = 128 fp16 every causal
# row here then has sections of 512 tiles (16 heads at S = 4096, 8 at 8192, 4 at 16384, 64 at 1024, 128 at 512).
# explore2.patch (on 64ab828; explore.patch plus FA_EXP_SECTION_MB, a section's K/V budget in MB, 0: two fifths of
# the L2, and FA_EXP_QTPC_D128_ONLY, FA_EXP_QTPC_CAUSAL at D = 128 only). Predictions (hot, paired rounds, each over
# s62), written before the call:
# - f3 (32 MB sections, a causal D = 128 launch from the counter where its last section holds 3 tiles a CTA):
#   1.005x-1.02x at (4, 16, 4096, 128), (2, 16, 8192, 128), (1, 16, 16384, 128) causal; 0.99x-1.01x at
#   (16, 16, 1024, 128, causal); 0.97x-1.00x at (8, 16, 512, 128, causal); 0.975x-1.00x at the grouped bf16 rows
#   (already from the counter, one section instead of two: c0e 0.980x / 0.995x); 1.00x at D = 64 and non-causal;
# - f0 (the same, every causal D = 128 launch from the counter): within 0.005 of f3 (every row here has 512 tiles or
#   more in its last section);
# - k3 again: 1.01x-1.02x at Falcon-7B, 1.00x elsewhere; f3k3: f3 plus k3;
# - all pass the 389-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
N=data/explorations/2026-12-04-causal-schedule-step62
git apply --check -R $N/explore2.patch 2>/dev/null || git apply $N/explore2.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
F='"FA_EXP_SECTION_MB": 32, "FA_EXP_QTPC_D128_ONLY": 1'
export EXP_CONFIGS="{\"s62\": [\"rescale_under_s\", {\"FA_EXP_QTPC_CAUSAL\": 4}],
  \"f3\": [\"rescale_under_s\", {$F, \"FA_EXP_QTPC_CAUSAL\": 3}],
  \"f0\": [\"rescale_under_s\", {$F, \"FA_EXP_QTPC_CAUSAL\": 0}],
  \"k3\": [\"rescale_under_s\", {\"FA_EXP_COUNTER_THREE_WGS\": 1}],
  \"f3k3\": [\"rescale_under_s\", {$F, \"FA_EXP_QTPC_CAUSAL\": 3, \"FA_EXP_COUNTER_THREE_WGS\": 1}]}"
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal",
  "8,16,512,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
  "1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "4,16,4096,64,causal", "2,16,8192,64,causal",
  "8,16,512,64,causal", "4,16,4096,128", "4,16,4096,64"]'
timeout ${TIME_END:-300} python $X/exp.py time 2 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
