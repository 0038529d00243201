# Device call 1 of data/explorations/2026-12-04-causal-schedule-step62 (issue 46), run from the repository root with
# carry [".whl", ".fa3"]. Nsight Compute over step 62 and FA3 (../2026-12-04-launch-by-launch-step62/call1) split each
# gap into the loop (mean active cycles a SM) and the schedule (the busiest SM's active cycles over the mean): at the
# causal D = 128 rows the schedule costs step 62 1.6-2.0 % more than FA3 (max / mean 1.019-1.035 against
# 1.012-1.019), at the D = 64 models rows 2.8-3.9 % (GPT-2 (1, 12, 8192, 64, causal, bf16): 1.038 against 1.009;
# Falcon-7B (1, 71, 8192, 64, causal, 1 K/V head, bf16): 1.048 against 1.009). Those launches walk step 27's static
# list of heavy-light pairs: the pairs weigh alike and do not divide over 132 CTAs (causal (1, 16, 16384, 128): 1024
# pairs, 7.76 a CTA, so the launch ends 3.1 % after the mean CTA), and with an odd number of 192-row tiles a head
# the single middle tiles land on 6 CTAs of 132 (item 22h + 21 of each head, 22 dividing 132). The counter (step
# 35, heaviest first in L2 sections) is not taken there: step 35's rule wants the last section to hold 4 tiles a CTA
# (a rule measured at non-causal launches, whose tiles weigh alike), and the static three-warpgroup tile (step 51)
# never takes it.
# explore.patch (on 64ab828; with its macros at their defaults nothing changes): FA_EXP_QTPC_CAUSAL (the tiles a CTA
# a causal launch's last section needs for the counter, 4), FA_EXP_EQUAL_SECTIONS (sections floor(K/V heads / the
# L2's fit) instead of the ceiling: fewer, larger, of about equal size), FA_EXP_COUNTER_THREE_WGS (the static
# three-warpgroup tile's kernel from the counter too, where the rule allows; its counter kernel spills 8 B, outside
# the loop: the same 152-register consumer as the static list's).
# Predictions (hot, paired rounds, each configuration over s62: the number exp.py's summary prints), written before
# the call:
# - c0 (every causal launch of the counter's kernels from the counter): 1.005x-1.02x at the long causal D = 128 rows
#   (4, 16, 4096, 128), (2, 16, 8192, 128), (1, 16, 16384, 128); 0.99x-1.02x at (16, 16, 1024, 128, causal) and
#   (8, 16, 512, 128, causal); 1.00x (within 0.005) at the grouped rows (already from the counter), at the D = 64
#   models rows (their tile never takes it), at the counter's D = 64 rows (4, 16, 4096, 64, causal) and (2, 16, 8192,
#   64, causal) (one section: already from the counter) and at every non-causal row; 0.98x-1.02x at
#   (8, 16, 512, 64, causal) (the short tiles' causal calls, now from the counter);
# - k3 (the three-warpgroup tile from the counter where the rule allows): 1.01x-1.04x at Falcon-7B; GPT-2 unchanged
#   (its last section holds 258 tiles, under 4 a CTA: still the static list);
# - c0k3: Falcon-7B as k3, GPT-2 1.01x-1.03x, the rest as c0;
# - c0e: within 0.01 of c0 at the long causal D = 128 rows (larger sections: a better tail against more L2 misses);
# - every configuration passes the 389-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
N=data/explorations/2026-12-04-causal-schedule-step62
git apply --check -R $N/explore.patch 2>/dev/null || git apply $N/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s62": ["rescale_under_s", {"FA_EXP_QTPC_CAUSAL": 4}],
  "c0": ["rescale_under_s", {"FA_EXP_QTPC_CAUSAL": 0}],
  "k3": ["rescale_under_s", {"FA_EXP_COUNTER_THREE_WGS": 1}],
  "c0k3": ["rescale_under_s", {"FA_EXP_QTPC_CAUSAL": 0, "FA_EXP_COUNTER_THREE_WGS": 1}],
  "c0e": ["rescale_under_s", {"FA_EXP_QTPC_CAUSAL": 0, "FA_EXP_EQUAL_SECTIONS": 1}]}'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal",
  "8,16,512,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
  "1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "4,16,4096,64,causal", "2,16,8192,64,causal",
  "8,16,512,64,causal", "4,16,4096,128", "4,16,4096,64"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
