# Device call 3 of data/explorations/2026-12-06-decode-h100-gaps (issue 50, target 4), from the repository root on
# one H100, carry [".whl"]: the decode part of a run (stage_now.py) twice, the first on a fresh machine (its builds
# and flex_attention's first compile), the second as a run's decode set finds the machine (steps built by the run's
# build stage). Records to $OUT (decode_1.json, decode_2.json, log.txt).
# Expectation, written before the call: the second stage's total 45-52 s (the RUN's 65.8 s less the profile's
# 17.4 s that call 2's split gives flex_attention's compile and its calls under ncu), its profile 7-10 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-decode-h100-gaps
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
for i in 1 2; do
  timeout 280 python $E/stage_now.py s$i /tmp/st > /tmp/log_$i.txt 2>&1; echo "stage $i rc=$?"
  d=$(ls -td /tmp/st/s$i/*/ | head -1); gzip -c $d/decode.json > $OUT/decode_$i.json.gz; cat /tmp/log_$i.txt >> $OUT/log.txt
  grep -E "decode stage|decode profile|checks|Traceback|Error" /tmp/log_$i.txt | cut -c1-240
done
cat $OUT/gpu.txt
# Part 2 (target 2 at (64, 32, 8, 128, 1024), 0.995x sdpa_default hot in call 1): Nsight Compute's full set over one
# call each of the end, sdpa_default and sdpa_cudnn there (cold calls: caches flushed between passes), details as CSV.
NCU=$(python -c "from lab.measure.ncu_process import find_ncu; print(find_ncu())")
timeout 200 $NCU --clock-control none --nvtx --nvtx-include "profile/" --set full --csv --page details \
  python -m lab.measure.decode_profile --shape 64,32,8,128,1024,bf16 --target l2_promotion_by_gpu,sdpa_default,sdpa_cudnn \
  > /tmp/full.csv 2> /tmp/full.err; echo "ncu full rc=$?"; gzip -c /tmp/full.csv > $OUT/ncu_full_64x1024.csv.gz
tail -3 /tmp/full.err
