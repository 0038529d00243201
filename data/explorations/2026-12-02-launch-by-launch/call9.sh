# Issue 46, call 9 (2026-12-02): call 8's overlap with the static tile's third K/V stage back. Call 8: ov lost 21-33 %
# on the static three-warpgroup tile (two K/V stages since step 53: the overlap holds stage j-1 for P V while S_j
# needs stage j, so the producer cannot run ahead) and 0.97x-1.00x on the counter's (three stages); ovfm (ov with the
# finite max) 1.0155x at (4, 16, 4096, 64, causal), 1.0107x at (2, 16, 8192, 64, causal).
# Configurations (as call 8; FA_TILE_STAGES_D64_THREE_WGS is the static tile's stages, a tunable):
#   s53:    as committed;
#   fm:     FA_EXP_FINITE_MAX = 2 (step 58's idea alone);
#   ovfm3:  ovfm with FA_TILE_STAGES_D64_THREE_WGS = 3 (the static tile at three stages, 160 consumer registers);
#   ovfm:   call 8's ovfm again (the counter rows' replicate).
# Predictions, written before the call (hot, paired rounds, over s53):
#   ovfm3: 0.97x-1.03x at the static rows (the stall on the ring gone; p24's 2.2-3.7 % loss stays), 1.005x-1.02x at
#          the counter rows; ovfm: within 0.005 of call 8's; fm: as calls 5 and 7. Outputs bit-equal. About 200 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/finite_max.patch && git apply $E/d64_overlap_fit.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}],
  "fm": ["two_stages_three_wgs_d64", {"FA_EXP_FINITE_MAX": 2}],
  "ovfm3": ["two_stages_three_wgs_d64", {"FA_EXP_D64_OVERLAP": 1, "FA_EXP_ROWLIMIT": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_FINITE_MAX": 2, "FA_TILE_STAGES_D64_THREE_WGS": 3}],
  "ovfm": ["two_stages_three_wgs_d64", {"FA_EXP_D64_OVERLAP": 1, "FA_EXP_ROWLIMIT": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_FINITE_MAX": 2}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "8,16,4096,64,causal",
  "4,16,4096,64", "8,16,4096,64", "1,16,16384,64", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16",
  "4,32,4096,64,kv8,bf16", "4,16,512,64", "4,16,4096,128"]'
TIME_END=${TIME_END:-250}; source $E/check_then_time.sh || exit 1
