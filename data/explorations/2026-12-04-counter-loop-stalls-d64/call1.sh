# Device call 1 of data/explorations/2026-12-04-counter-loop-stalls-d64 (issue 46, target 1's last causal row), from
# the repository root, carry [".fa3"]. About 200 s with the machine's start.
# Step 67's counter tile (192 x 128, three consumer warpgroups, overlapped since step 59) trails FA3's causal D = 64
# kernel (the same tile, two K/V stages): 0.978x hot and 0.948x [0.925, 0.972] sustained at (4, 16, 4096, 64, causal)
# in step 66's run, 2.2 % more SM cycles hot (../2026-12-04-counter-stages-d64). Its main loop is the shorter (397
# instructions a 128 keys against 417, sass_compare), and neither two stages nor the exponentials' place closed it.
# Nsight Compute's PC sampling over one launch each of step 67 and FA3 (as ../2026-12-02-launch-by-launch call 6 did
# for step 53, whose D = 64 loop then ran in series), exported per SASS instruction; loop_samples.py and
# stall_ledger.py of that folder read them.
# Predictions, written before the call:
#  - every sample of the kernel: step 67 1.01x-1.04x FA3's at both shapes (its 2.2 % more cycles);
#  - the main loop's body (the instructions executed most often), per 1000 warp-iterations of 128 keys: within
#    0.97x-1.03x of FA3's, the barrier (wgmma wait) excess of step 53's serial loop (+11.0 a 1000) under +3;
#  - so most of the excess lies outside that body (split.py: all samples, the body's, the rest by mnemonic): the
#    masked diagonal tiles' loop, the prologue and epilogue of each work tile (Q's wait, the first S, O's store), the
#    counter's hand-off. (FA3's rest holds its own masked loop: the rest's ratio is loose, the total is the measure.)
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-launch-by-launch
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
$NCU --version | tail -1 >> $OUT/gpu.txt
T0=$(date +%s)
python -c "from lab.kernels import build; from lab.kernels.manifest import get; print(build.build_variant(get('uniform_row0_d128')).ok)"
echo "built $(( $(date +%s)-T0 )) s"
mkdir -p /tmp/reps
for shape in 4,16,4096,64,causal 1,12,8192,64,causal,bf16; do
  n=${shape//,/_}
  timeout 150 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SourceCounters --section WarpStateStats \
    --section SpeedOfLight --section LaunchStats --import-source no -o /tmp/reps/$n -f \
    python $E/prof_pair.py uniform_row0_d128 flash_attn3 $shape > /tmp/reps/$n.log 2>&1
  echo "ncu $shape rc=$? $(( $(date +%s)-T0 )) s"; tail -2 /tmp/reps/$n.log
  $NCU --import /tmp/reps/$n.ncu-rep --page source --print-source sass --csv > /tmp/reps/src_$n.csv 2>&1
  $NCU --import /tmp/reps/$n.ncu-rep --page details --csv > /tmp/reps/details_$n.csv 2>&1
  python $E/loop_samples.py /tmp/reps/src_$n.csv 128,128 2>&1 | tee $OUT/loop_samples_$n.txt | head -20
  python data/explorations/2026-12-04-counter-loop-stalls-d64/split.py /tmp/reps/src_$n.csv 2>&1 | tee $OUT/split_$n.txt
done
( cd /tmp/reps && tar cJf $OUT/source_pages.tar.xz src_*.csv details_*.csv ) && ls -la $OUT
