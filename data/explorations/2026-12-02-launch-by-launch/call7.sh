# Issue 46, call 7 (2026-12-02): three of call 6's leads, timed. Call 6's PC samples put step 53's causal D = 128 loop
# at 12.6 % more samples a 128 keys than FA3's, spread over fixed-latency waits, short-scoreboard waits, the loop's
# branch and the barrier waits; at causal D = 64 over the waits on S and on P V (barrier: 20.7 against 9.7 samples a
# 1000 warp-iterations), where each warpgroup runs the tile in series (step 30) and FA3 overlaps.
# Configurations (patches on the device copy only; all on step 53's twin, as exp.py builds it):
#   s53:  as committed;
#   fm64: finite_max.patch, FA_EXP_FINITE_MAX = 2 (call 5's: the unmasked row max with no -inf guard, D = 64 only);
#   ftz:  ftz_max.patch, FA_EXP_FTZ_MAX = 1: the row maxima (the tile's, the quad's shuffles, the running one) as
#         max.ftz.f32, FMNMX.FTZ as FA3's, instead of FMNMX (the same 470 instructions a 128 keys at D = 128);
#   ov64: d64_overlap.patch, FA_EXP_D64_OVERLAP = 1: the three-warpgroup D = 64 tiles (kThreeWgs, kThreeWgsQueue)
#         run D = 128's overlapped loop (S_j's softmax behind P_{j-1} V_{j-1}) instead of the serial one. It spills
#         in the loop (nvcc 13.0: 80 B at the static list's 152 registers, 68 B at the counter's 160).
# Predictions, written before the call (hot, paired rounds, over s53):
#   fm64: as call 5: 1.002x-1.008x at the long D = 64 rows, 1.01x-1.035x at (4, 16, 512, 64, causal) and (8, 16,
#         512, 64), 0.997x-1.003x at D = 128.
#   ftz:  1.000x-1.010x at every row (call 6: math-pipe throttle 1.3 against FA3's 0.4 samples a 1000
#         warp-iterations, most on FMNMX); none under 0.995x.
#   ov64: 0.90x-1.00x at the three-warpgroup D = 64 rows (the spills cost more than the overlap buys); 0.997x-1.003x
#         elsewhere (the same kernels). A loss here does not close the lead: the spills are the confound.
# Outputs of every configuration bit-equal to s53's (the same arithmetic in the same order). About 220 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/finite_max.patch && git apply $E/ftz_max.patch && git apply $E/d64_overlap.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}],
  "fm64": ["two_stages_three_wgs_d64", {"FA_EXP_FINITE_MAX": 2}],
  "ftz": ["two_stages_three_wgs_d64", {"FA_EXP_FTZ_MAX": 1}],
  "ov64": ["two_stages_three_wgs_d64", {"FA_EXP_D64_OVERLAP": 1}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "4,16,4096,64", "8,16,4096,64",
  "1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "4,16,4096,128,causal", "1,16,16384,128,causal",
  "1,32,8192,128,causal,kv8,bf16", "4,16,4096,128", "1,16,16384,128", "4,16,512,64,causal", "8,16,512,64", "8,16,512,128"]'
TIME_END=330; source $E/check_then_time.sh || exit 1
