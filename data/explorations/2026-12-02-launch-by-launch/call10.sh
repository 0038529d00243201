# Issue 46, call 10 (drafted 2026-12-02 for after step 58 lands; queue_overlap_d64.patch is against step 58's tree):
# the overlapped loop on the counter's three-warpgroup D = 64 tile only. Calls 8-9: with the finite max, the overlap
# (masks with one bound a row, no spills) was 1.0145x-1.0155x over step 53 at (4, 16, 4096, 64, causal) and
# 1.0106x-1.0107x at (2, 16, 8192, 64, causal) where the finite max alone was 1.0026x and 1.0028x; 0.999x at
# (1, 16, 16384, 64, causal); on the static tile it lost (0.67x-0.97x), which this patch leaves serial.
# Configurations (twin of step 58, spill-free with nvcc 13.0):
#   s58: as committed;
#   qov: FA_EXP_QUEUE_OVERLAP_D64 = 1.
# Predictions, written before the call (hot, paired rounds, over s58): 1.008x-1.016x at (4, 16, 4096, 64, causal)
# and (2, 16, 8192, 64, causal); 0.997x-1.003x at (1, 16, 16384, 64, causal) and at every shape that does not take
# the counter's tile ((8, 16, 4096, 64, causal), (4, 16, 4096, 64), (4, 16, 512, 64, causal), (4, 16, 4096, 128)).
# Outputs bit-equal to s58's. About 200 s with the start.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/queue_overlap_d64.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s58": ["finite_max_d64", {}], "qov": ["finite_max_d64", {"FA_EXP_QUEUE_OVERLAP_D64": 1}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "8,16,4096,64,causal",
  "4,16,4096,64", "4,16,512,64,causal", "4,16,4096,128"]'
TIME_END=${TIME_END:-200}; source $E/check_then_time.sh || exit 1
