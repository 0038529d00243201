# Issue 46, from data/explorations/2026-11-29-stall-sources: at (4, 16, 4096, 64, causal) step 52's consumers wait
# 2.7 % of their samples at the K stage's full barrier (the ring runs dry), FA3's whole long-scoreboard share is 3.3 %.
# The three-warpgroup tile has 3 K/V stages of 128 keys (120 KB); a fourth fits (152 KB, one CTA an SM), and the
# tuning never searched this tile's stages (its last run served step 36). Step 52's twin at FA_TILE_STAGES_D64 = 4
# and = 2 (FA3's count) against step 52; every config spill-free (nvcc 13.0, FA_SASS_FP16_ONLY build). The define
# also sets the 64-row short tile's stages, which the shapes below do not take (its two CTAs an SM would not fit four
# stages). carry [".whl", ".fa3"]; about 250 s on a fresh machine.
#
# Predictions, written before the call (speedup over step 52, hot; time.txt's `s52/x` columns are step 52's time
# over x's, so the speedup is that ratio itself):
#   st4: causal three-warpgroup shapes (4, 16, 4096), (1, 16, 16384), GPT-2 (1, 12, 8192, bf16), Falcon-7B
#        (1, 71, 8192, kv1, bf16): 1.00x-1.03x; non-causal (4, 16, 4096), (2, 16, 8192): 0.99x-1.02x.
#   st2: 0.96x-1.00x everywhere (the ring runs dry more often), unless the smem it frees matters (it should not:
#        one CTA an SM either way).
# Added 2026-12-01, before the call: the counter for the causal D = 64 calls step 51 keeps on its static pairs.
# data/explorations/2026-11-29-q-double-buffer call 2 measured the counter over one section at 1.027x over step 51
# at Falcon-7B's (1, 71, 8192, kv1, bf16), whose K/V (2 MB) sits in L2, and 0.959x-0.976x where 128-256 MB of K/V
# do not; GPT-2's (1, 12, 8192, bf16) row did not take it (516 tiles, under the 4 an SM). qall: no call on step 51's
# static pairs (FA_TILE_THREE_WGS_CAUSAL_FILL_D64 = 101) and the counter from 3 tiles an SM
# (FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64 = 3); qall4 the same at four stages.
#   qall: Falcon-7B 1.01x-1.04x; GPT-2 0.97x-1.01x (160 registers against 152, the pairs already fill 100 %);
#         (8, 16, 4096, causal) 0.96x-0.99x; the shapes already on the counter and non-causal 0.99x-1.01x.
#   qall4: qall's ratio times st4's at the same shape, within 0.01.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s52": ["three_wgs_queue_causal_d64", {}], "st4": ["three_wgs_queue_causal_d64", {"FA_TILE_STAGES_D64": 4}],
  "st2": ["three_wgs_queue_causal_d64", {"FA_TILE_STAGES_D64": 2}],
  "qall": ["three_wgs_queue_causal_d64", {"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 101, "FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64": 3}],
  "qall4": ["three_wgs_queue_causal_d64", {"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 101, "FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64": 3, "FA_TILE_STAGES_D64": 4}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "1,16,16384,64,causal", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16",
  "8,16,4096,64,causal", "4,16,4096,64", "2,16,8192,64"]'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -12
timeout $(( 330 - ($(date +%s)-T0) )) python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
