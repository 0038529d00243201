# Issue 46, call 6 (2026-12-02): where the warps wait, instruction by instruction. Call 1 found step 53's warps
# stalled on the long scoreboard 0.61-0.73 a issue against FA3's 0.20-0.25 at the causal shapes, and call 5 halved
# its DRAM reads at (4, 16, 4096, 64, causal) without moving its time (sec: 383 -> 196 MB, 1.008x). Nsight
# Compute's PC sampling (SourceCounters) over one launch each of step 53 and FA3, exported per SASS instruction
# (`--page source --print-source sass`); stall_ledger.py joins the samples to the instructions here.
# Predictions, written before the call:
#  - step 53, causal D = 128 and causal D = 64: more than half of the long-scoreboard samples sit on the consumers'
#    mbarrier waits (SYNCS.PHASECHK / the try-wait loop) for a full K/V stage, not on global loads (the consumers
#    issue none in the loop); FA3's share of samples on its K/V waits under a third of ours.
#  - (1, 16, 16384, 128) non-causal: the samples spread over the loop's issue (selected, not_selected,
#    math_pipe_throttle, wait) with waits on barriers under 20 %: the gap there is the instruction count.
# About 200 s with the start.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-launch-by-launch
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
$NCU --version | tail -1 >> $OUT/gpu.txt
T0=$(date +%s)
python -c "from lab.kernels import build; from lab.kernels.manifest import get; print(build.build_variant(get('two_stages_three_wgs_d64')).ok)"
echo "built $(( $(date +%s)-T0 )) s"
mkdir -p /tmp/reps
for shape in 1,16,16384,128,causal 4,16,4096,64,causal 1,16,16384,128; do
  n=${shape//,/_}
  timeout 150 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SourceCounters --section WarpStateStats \
    --import-source no -o /tmp/reps/$n -f python $E/prof_pair.py two_stages_three_wgs_d64 flash_attn3 $shape \
    > /tmp/reps/$n.log 2>&1
  echo "ncu $shape rc=$? $(( $(date +%s)-T0 )) s"; tail -2 /tmp/reps/$n.log
  $NCU --import /tmp/reps/$n.ncu-rep --page source --print-source sass --csv > /tmp/reps/src_$n.csv 2>&1
  echo "source page rc=$? $(wc -c < /tmp/reps/src_$n.csv) bytes"
  $NCU --import /tmp/reps/$n.ncu-rep --page details --section WarpStateStats --csv > /tmp/reps/warp_$n.csv 2>&1
done
head -c 1500 /tmp/reps/src_1_16_16384_128_causal.csv
( cd /tmp/reps && tar cJf $OUT/source_pages.tar.xz src_*.csv warp_*.csv ) && ls -la $OUT
( cd /tmp/reps && tar cJf $OUT/reps.tar.xz *.ncu-rep ) && ls -la $OUT/reps.tar.xz
