# Device call 1 of data/explorations/2026-12-04-causal-d128-sections-step64 (issue 46), from the repository root,
# carry [".whl", ".fa3"]. PREPARED 2026-12-04 (stop 87, CPU only: explore.patch compiles, sections.txt), RAN 2026-12-04 (stop 87) without its
# Nsight part (the lines from NCU= to `capture r` and the split's echo, cut with sed for want of device time): results in
# call1/ and the README.
# Applies explore.patch in the device's copy where the tree lacks it (at its defaults nothing changes). At the
# causal D = 128 rows step 64 walks step 27's static heavy-light pairs (sections.txt: the counter's last section is
# 0.97-2.2 tiles a CTA there, under the 4 it asks for), and ../2026-12-04-launch-by-launch-step62 put 1.6-2.0 % of
# FA3's lead there in the schedule. ../2026-12-04-causal-schedule-step62 (calls 2-3, step 62, two H200s) measured
# FA3's 32 MB sections with the counter from 3 tiles a CTA: +0.5-1.9 % at the long causal rows, GPU-dependent.
# This call measures that rule (r: causal D = 128 from 4096 keys) on step 64, its section size (r48, r64), two rows
# the earlier calls did not time, and where r's schedule stands against FA3's under Nsight Compute.
# Predictions, written before the call:
# - every configuration passes the 389-case grid;
# - r over step 64 (s64), hot, paired rounds: (4, 16, 4096, 128, causal) 0.995x-1.006x, (2, 16, 8192, 128, causal)
#   1.005x-1.017x, (1, 16, 16384, 128, causal) 1.015x-1.020x (calls 2-3); (1, 16, 8192, 128, causal) and
#   (8, 16, 4096, 128, causal) 1.00x-1.025x (static pairs 3.88 and 15.5 a CTA: a last round 88 % and 52 % full, about
#   3 % over the mean, less the counter's cost); (16, 16, 1024, 128, causal) and (4, 16, 4096, 128) 1.000x within
#   0.003 (the rule leaves them); the S = 8192 models rows 0.998x-1.002x (the counter already; one section now);
# - r48 within 0.005 of r everywhere; r64 (sections of 64 MB, past the 60 MB L2) 0.99x-1.00x of r at the S >= 8192
#   rows, where a section's K/V no longer fits;
# - Nsight Compute (r as the header's default, then step 64 as committed, each beside FA3): step 64's busiest SM over
#   its mean 1.015x-1.025x FA3's at (4, 16, 4096, 128, causal) and (1, 16, 16384, 128, causal); r's within 1.005x
#   FA3's; the loop (mean active cycles) 1.00x-1.01x FA3's in both.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
L=data/explorations/2026-12-02-launch-by-launch
E=data/explorations/2026-12-04-causal-d128-sections-step64
grep -q FA_EXP_CAUSAL_MIN_S_D128 kernels/include/fa/tile_queue.cuh || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s64": ["mirrored_second_tile", {}],
  "r": ["mirrored_second_tile", {"FA_EXP_CAUSAL_MIN_S_D128": 4096}],
  "r48": ["mirrored_second_tile", {"FA_EXP_CAUSAL_MIN_S_D128": 4096, "FA_EXP_SECTION_MB_D128": 48}],
  "r64": ["mirrored_second_tile", {"FA_EXP_CAUSAL_MIN_S_D128": 4096, "FA_EXP_SECTION_MB_D128": 64}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "1,16,8192,128,causal",
  "8,16,4096,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16", "1,64,8192,128,causal,kv8,bf16",
  "1,28,8192,128,causal,kv4,bf16", "4,16,4096,128"]'
timeout 200 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,smsp__inst_executed.sum
capture() {  # $1: the folder under /tmp for this configuration's captures
  mkdir -p /tmp/$1
  for shape in 4,16,4096,128,causal 1,16,16384,128,causal; do
    timeout 100 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --page raw \
      --print-units base python $L/prof_pair.py mirrored_second_tile flash_attn3 $shape > /tmp/$1/ncu_${shape//,/_}.csv 2>&1
    echo "ncu $1 $shape rc=$? $(( $(date +%s)-T0 )) s"; done
  python $L/compare.py /tmp/$1/ncu_*.csv > $OUT/compare_$1.txt 2>&1
  python data/explorations/2026-12-04-launch-by-launch-step62/split.py $OUT/compare_$1.txt > $OUT/split_$1.txt 2>&1
}
capture s64
sed -i 's/^#define FA_EXP_CAUSAL_MIN_S_D128 0$/#define FA_EXP_CAUSAL_MIN_S_D128 4096/' kernels/include/fa/tile_queue.cuh
capture r
python $X/exp.py summary $OUT/time.txt
echo "== split (step 64 as committed, then r; 'schedule' is the busiest SM over the mean, over FA3's)"
cat $OUT/split_s64.txt $OUT/split_r.txt
