# Device call 1 of data/explorations/2026-12-04-counter-second-tile (issue 46), from the repository root, carry
# [".whl", ".fa3"]. PREPARED 2026-12-04 (CPU only: sim.py; the step compiled, its CPU tests run), RAN 2026-12-04 (stop 87; results in call1/ and the README). Applies,
# in the device's copy of the tree, step 63 (../../checks/2026-12-04-step63-counter-tile-causal-d64-draft/
# step63-landing.patch) where the tree lacks it and step 64 (step64-landing.patch, on step 63) where it lacks that;
# checks step 64 on the 389-case grid and times it hot in paired rounds over step 63
# (../2026-11-28-kv-apart-d128/exp.py).
# Configurations: m (step 64: the counter tile from 2 tiles an SM inclusive, mirrored under 3 a CTA), m1 (from 1 an
# SM), n (no mirror, from 2 inclusive: call 2's c2 of step 63, the control), and for the grid only mx (every causal
# D = 64 call of any S on the counter tile, every launch mirrored: the mirrored path on all the grid's causal D = 64
# cases).
# Predictions, written before the call (sim.py's speed of the mirror over the counter as it is, at 1 and 3 key tiles
# of overhead a work tile, times step 63's measured speed where step 63 takes the counter):
# - every configuration passes the grid;
# - m over step 63: (1, 13, 4096) 1.12x-1.25x, (1, 14, 4096) 1.07x-1.16x, (1, 7, 8192) 1.14x-1.24x, (1, 8, 8192)
#   1.03x-1.09x, (1, 16, 4096) 0.99x-1.05x, (1, 9, 8192) 0.97x-1.01x; (1, 12, 4096) (two tiles an SM, step 62's
#   pairs under step 63) 1.03x-1.08x (the pairs' balance on the overlapped tile, as GPT-2's 1.047x); from three tiles
#   an SM on ((1, 18, 4096), GPT-2, Falcon-7B, (4, 16, 4096, 64, causal)) and (4, 16, 4096, 64) 1.000x within 0.005;
#   (1, 8, 4096) and (1, 11, 4096) (under two an SM) 1.000x within 0.005;
# - m1: as m, and 1.03x-1.08x at (1, 8, 4096) and (1, 11, 4096);
# - n: 0.75x-0.79x at (1, 12, 4096) (call 2's c2: 0.770x), 1.000x within 0.005 elsewhere.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-counter-second-tile
C=data/checks/2026-12-04-step63-counter-tile-causal-d64-draft
[ -f kernels/variants/63_counter_tile_causal_d64.cu ] || git apply $C/step63-landing.patch || exit 1
[ -f kernels/variants/64_mirrored_second_tile.cu ] || git apply $E/step64-landing.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s63": ["counter_tile_causal_d64", {}], "m": ["mirrored_second_tile", {}],
  "m1": ["mirrored_second_tile", {"FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64": 1}],
  "n": ["mirrored_second_tile", {"FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64": 0}],
  "mx": ["mirrored_second_tile", {"FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64": 1, "FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64": 0,
         "FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64": 1000}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_CONFIGS='{"s63": ["counter_tile_causal_d64", {}], "m": ["mirrored_second_tile", {}],
  "m1": ["mirrored_second_tile", {"FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64": 1}],
  "n": ["mirrored_second_tile", {"FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64": 0}]}'
export EXP_SHAPES='["1,8,4096,64,causal", "1,11,4096,64,causal", "1,12,4096,64,causal", "1,13,4096,64,causal",
  "1,14,4096,64,causal", "1,16,4096,64,causal", "1,18,4096,64,causal", "1,7,8192,64,causal", "1,8,8192,64,causal",
  "1,9,8192,64,causal", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "4,16,4096,64,causal",
  "4,16,4096,64"]'
timeout 240 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
