# Call 3 (issue 46): per-instruction warp-stall sampling (ncu SourceCounters, WarpStateStats) and the tensor pipe of
# step 50 and FA3 at (4, 16, 4096, 128) causal, the 128 x 128 tile both take (the consumers' samples are then read
# with ../2026-11-29-kv-apart-two-stages/consumer_stalls.py).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
$NCU --version | tail -1 > $OUT/ncu_version.txt
for impl in pipeline_state_d128 flash_attn3; do
  tag=${impl}_causal
  timeout 200 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SourceCounters --section WarpStateStats \
    --section LaunchStats --section ComputeWorkloadAnalysis -f -o /tmp/$tag python -m lab.measure.profile --target $impl \
    --shape 4,16,4096,128,causal > /tmp/$tag.log 2>&1
  echo "$tag rc=$?"; tail -2 /tmp/$tag.log
  $NCU -i /tmp/$tag.ncu-rep --page source --csv --print-source sass > /tmp/${tag}_sass.csv 2>/tmp/${tag}_exp.err
  $NCU -i /tmp/$tag.ncu-rep --page details --csv > /tmp/${tag}_details.csv 2>/dev/null
done
cd /tmp && tar czf $OUT/stalls_causal.tgz *_sass.csv *_details.csv *.log; ls -la $OUT
