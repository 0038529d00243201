# Device call 4 of data/explorations/2026-12-04-causal-schedule-step62 (issue 46), run from the repository root with
# carry [".whl", ".fa3"]. Two parts, the session's last device time:
# (1) The D = 64 models rows on step 52's tile instead of step 51's: Falcon-7B (1, 71, 8192, 64, causal, 1 K/V head)
#     and GPT-2 (1, 12, 8192, 64, causal) take the static three-warpgroup tile (kind 3, in series, the static pairs);
#     the three-warpgroup tile from the counter (kind 4, overlapped, 160-register consumer, no spills) is what step 52
#     gives the causal calls whose pairs fill the last round less. q4 sends them there: FA_TILE_THREE_WGS_CAUSAL_FILL_D64
#     = 101 (step 51's rule never holds), FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64 = 2 and, with explore3.patch,
#     FA_EXP_QTPC_CAUSAL = 3 (GPT-2's 516 tiles take the counter). Predictions (hot, paired rounds, over s62): q4
#     1.00x-1.04x at Falcon-7B (k3, kind 3 from the counter, gained 1.5-1.7 %; kind 4 overlaps S with the softmax too,
#     but step 59 measured the overlap only on the counter's tile), 0.98x-1.03x at GPT-2; unchanged (within 0.003)
#     at (4, 16, 4096, 64, causal) and (2, 16, 8192, 64, causal) (kind 4 already) and the non-causal control.
# (2) PC sampling (../2026-11-29-stall-sources's prof_src.py and stall_summary.py, ncu SourceCounters) of step 62
#     and FA3 at (4, 16, 4096, 128) and (1, 16, 16384, 128): ../2026-12-04-launch-by-launch-step62 found step 62's
#     loop 1.6-2.8 % slower in cycles with 4-6 % fewer instructions, with long-scoreboard stalls an issue 0.65-0.69
#     against 0.20-0.21. Prediction: as at step 52, the largest long-scoreboard sites are the producer warp's waits
#     for a free stage (idle, not the consumers'); the consumers' extra stalls are at the wgmma waits (S_j's,
#     gsb0 0x1) and the MUFU / FMUL chains of the softmax (short scoreboard and wait), not at the K/V barriers.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
N=data/explorations/2026-12-04-causal-schedule-step62
S=data/explorations/2026-11-29-stall-sources
git apply --check -R $N/explore3.patch 2>/dev/null || git apply $N/explore3.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
( python $S/prof_src.py rescale_under_s 2,2,256,128 > /tmp/warm.log 2>&1 ) &  # builds step 62 for part 2 meanwhile
export EXP_CONFIGS='{"s62": ["rescale_under_s", {"FA_EXP_QTPC_CAUSAL": 4}],
  "q4": ["rescale_under_s", {"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 101, "FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64": 2,
         "FA_EXP_QTPC_CAUSAL": 3}]}'
export EXP_SHAPES='["1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "4,16,4096,64,causal",
  "2,16,8192,64,causal", "4,16,4096,64"]'
timeout 100 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
timeout 60 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
wait
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1); mkdir -p /tmp/src
for job in "rescale_under_s 4,16,4096,128" "flash_attn3 4,16,4096,128" "rescale_under_s 1,16,16384,128" \
           "flash_attn3 1,16,16384,128"; do
  set -- $job; tag=$1_$(echo $2 | tr , _)
  [ $(( $(date +%s)-T0 )) -gt 250 ] && { echo "skip $tag (time)"; continue; }
  timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SourceCounters --section WarpStateStats \
    --import-source no -f -o /tmp/src/$tag python $S/prof_src.py $1 $2 > /tmp/src/$tag.log 2>&1
  echo "ncu $tag rc=$? $(( $(date +%s)-T0 )) s"
  $NCU -i /tmp/src/$tag.ncu-rep --page source --csv --print-source sass > /tmp/src/$tag.csv 2>/tmp/src/$tag.err
  python $S/stall_summary.py /tmp/src/$tag.csv 12 > /tmp/src/$tag.txt 2>&1
done
( cd /tmp/src && gzip -k *.csv && tar czf $OUT/sources.tgz *.csv.gz *.txt *.log *.err )
for f in /tmp/src/*.txt; do echo "== $f"; grep -E "^\[|instructions" $f | head -14 | cut -c1-200; done
