# Issue 46, call 8 (2026-12-02): the D = 64 overlap made to fit. Call 7's ov64 (the three-warpgroup D = 64 tiles
# running D = 128's overlapped loop) spilled in the loop and lost (0.66x-0.99x). d64_overlap_fit.patch adds two
# exploration macros to d64_overlap.patch: FA_EXP_ROWLIMIT (the overlapped tiles mask with one bound per row, step
# 33's ROW_LIMIT: the counter's kernel no longer spills) and FA_EXP_THREE_WGS_PRODUCER_REGS (the static
# three-warpgroup tile's producer at 24 registers instead of 40, so its consumers get 160 instead of 152: with both, no
# kernel spills; nvcc 13.0). Loop (SASS, shortest path a 128 keys): unmasked 428-429 instructions against the serial
# 410-415; masked 540-542 against 562-861. Call 6: at (4, 16, 4096, 64, causal) the serial loop's barrier waits are
# 20.7 samples a 1000 warp-iterations against FA3's 9.7, of 103 against 90 in all.
# Configurations (patches on the device copy only, all on step 53's twin):
#   s53:  as committed;
#   p24:  FA_EXP_THREE_WGS_PRODUCER_REGS = 24 alone (the static tile's consumers at 160, the loop serial);
#   ov:   FA_EXP_D64_OVERLAP = 1, FA_EXP_ROWLIMIT = 1, FA_EXP_THREE_WGS_PRODUCER_REGS = 24;
#   ovfm: ov with finite_max.patch's FA_EXP_FINITE_MAX = 2 (step 58's idea).
# Predictions, written before the call (hot, paired rounds, over s53):
#   p24: 0.96x-0.99x at the static three-warpgroup rows ((4, 16, 4096, 64), (8, 16, 4096, 64), (1, 16, 16384, 64),
#        GPT-2's, Falcon-7B's causal rows; step 49 measured 152 registers 3-4 % faster than 160), 0.998x-1.002x at the
#        counter's causal rows (already 160) and the controls;
#   ov:  1.02x-1.06x at the counter's causal rows ((4, 16, 4096, 64), (2, 16, 8192, 64), (1, 16, 16384, 64), (8, 16,
#        4096, 64), causal): half the excess barrier waits gone; 0.99x-1.04x at the static rows (p24's loss against
#        the overlap's gain); 0.998x-1.002x at the controls (4, 16, 512, 64) and (4, 16, 4096, 128);
#   ovfm: ov's figures and 1.000x-1.008x more.
# Outputs bit-equal to s53's (the same operations on O in the same order, as call 7's ov64). About 250 s alone.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/finite_max.patch && git apply $E/d64_overlap_fit.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}],
  "p24": ["two_stages_three_wgs_d64", {"FA_EXP_THREE_WGS_PRODUCER_REGS": 24}],
  "ov": ["two_stages_three_wgs_d64", {"FA_EXP_D64_OVERLAP": 1, "FA_EXP_ROWLIMIT": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24}],
  "ovfm": ["two_stages_three_wgs_d64", {"FA_EXP_D64_OVERLAP": 1, "FA_EXP_ROWLIMIT": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_FINITE_MAX": 2}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "8,16,4096,64,causal",
  "4,16,4096,64", "8,16,4096,64", "1,16,16384,64", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16",
  "4,32,4096,64,kv8,bf16", "4,16,512,64", "4,16,4096,128"]'
TIME_END=${TIME_END:-300}; source $E/check_then_time.sh || exit 1
