# Issue 46, call 11 (drafted 2026-12-02 for after step 59 lands; one_loop_short_d64.patch is against step 59's tree):
# target 4 (hot: no canonical S = 512 row more than 2 % slower than step 35) is missed in run 20261202T115620Z-0cffc5d
# at (8, 16, 512, 64, causal): step 58 0.969x step 35 [lower end 0.965]. Along the ladder at that shape the loss is
# step 48's (unmasked tiles in a loop of their own): 0.9505x hot over step 36 there, 0.9596x at (4, 16, 512, 64,
# causal), 0.9874x at (1, 8, 512, 64, causal); the same step gained 1.0324x at (1, 8, 512, 64) and 1.0098x at (4, 16,
# 512, 64) non-causal. Every step after 48 is level there (0.998x-1.014x). Those shapes take the short D = 64 tile
# (HopperTileKind 0, two CTAs an SM: fewer than ten 64-row work tiles an SM).
# Configurations (twin of step 59; one_loop_sass.txt: value 0 is step 59's SASS, 1 and 2 change only the 4 short
# D = 64 kernels, spill-free):
#   s59: as committed;
#   ol1: FA_EXP_ONE_LOOP_SHORT_D64 = 1, the short D = 64 tile keeps step 36's one loop (the mask decided per warp);
#   ol2: = 2, one loop where the call is causal, step 48's two loops otherwise (decided at run time).
# Predictions, written before the call (hot, paired rounds, over s59):
#   ol1 and ol2: 1.02x-1.06x at (8, 16, 512, 64, causal) and (4, 16, 512, 64, causal), 1.00x-1.02x at (1, 8, 512, 64,
#     causal);
#   ol1: 0.96x-1.00x at (1, 8, 512, 64), 0.98x-1.00x at (4, 16, 512, 64), 0.99x-1.01x at (8, 16, 512, 64);
#   ol2: 0.99x-1.01x at the three non-causal ones;
#   both 0.997x-1.003x at the shapes on other tiles ((32, 8, 512, 64), (4, 16, 4096, 64), (4, 16, 4096, 128)).
# Outputs bit-equal to s59's. About 250 s with the start.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/one_loop_short_d64.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s59": ["queue_overlap_d64", {}], "ol1": ["queue_overlap_d64", {"FA_EXP_ONE_LOOP_SHORT_D64": 1}],
  "ol2": ["queue_overlap_d64", {"FA_EXP_ONE_LOOP_SHORT_D64": 2}]}'
export EXP_SHAPES='["8,16,512,64,causal", "4,16,512,64,causal", "1,8,512,64,causal", "1,8,512,64", "4,16,512,64",
  "8,16,512,64", "32,8,512,64", "4,16,4096,64", "4,16,4096,128"]'
TIME_END=${TIME_END:-220}; source $E/check_then_time.sh || exit 1
