# Issue 46: where step 52's warps stall that FA3's do not, instruction by instruction. The run 20261129T120250Z-7bab92e
# profiled (4, 16, 4096, 64) and (4, 16, 4096, 128) non-causal: barrier stalls 1.23 against FA3's 0.43 at D = 64, long
# scoreboard 0.64 against 0.21 at D = 128 (cycles an issued instruction), tensor pipe 57.3 % / 61.1 % and 80.6 % / 87.7 %.
# This call samples the warps' program counters (ncu's SourceCounters) at those shapes and at (4, 16, 4096, 64, causal)
# for step 52 and FA3, and sums the samples by reason and instruction (stall_summary.py). carry [".whl", ".fa3"].
# Expectations, written before the call: at D = 64 the barrier samples sit at the consumers' named barriers around the
# work tile's Q (the three warpgroups wait for each other once a tile) and at the producer's; at D = 128 the long
# scoreboard samples sit at the producer warp's counter atomics and the hand-off's loads, not in the consumers' loop.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-11-29-stall-sources
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s); mkdir -p /tmp/src
for job in "three_wgs_queue_causal_d64 4,16,4096,64" "flash_attn3 4,16,4096,64" "three_wgs_queue_causal_d64 4,16,4096,128" \
           "flash_attn3 4,16,4096,128" "three_wgs_queue_causal_d64 4,16,4096,64,causal" "flash_attn3 4,16,4096,64,causal"; do
  set -- $job; tag=$1_$(echo $2 | tr , _)
  [ $(( $(date +%s)-T0 )) -gt 230 ] && { echo "skip $tag (time)"; continue; }
  timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SourceCounters --section WarpStateStats \
    --import-source no -f -o /tmp/src/$tag python $E/prof_src.py $1 $2 > /tmp/src/$tag.log 2>&1; echo "ncu $tag rc=$? $(( $(date +%s)-T0 )) s"
  $NCU -i /tmp/src/$tag.ncu-rep --page source --csv --print-source sass > /tmp/src/$tag.csv 2>/tmp/src/$tag.err
  python $E/stall_summary.py /tmp/src/$tag.csv 10 > /tmp/src/$tag.txt 2>&1
  $NCU -i /tmp/src/$tag.ncu-rep --page details --csv > /tmp/src/$tag.details.csv 2>/dev/null
done
( cd /tmp/src && tar czf $OUT/sources.tgz *.csv *.txt *.log *.err )
for f in /tmp/src/*.txt; do echo "== $f"; grep -E "^\[|instructions" $f | cut -c1-260; done
