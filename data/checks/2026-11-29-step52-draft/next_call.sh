# The next session's first device call (issue 46), on the tree with step52.patch (this folder) applied and committed:
# the GPU tests of step 52 (the step, its twin and every knock-out configuration on the correctness grid), the
# sanitizers on the new end, then step 52 against step 51, hot, at the shapes the rule was read from (call 2 of
# data/explorations/2026-11-29-q-double-buffer), at shapes it was not (below), and where it does not fire, beside
# FA3 and cuDNN; then Nsight Compute's SM balance of both at the judged shape. carry [".whl", ".fa3"]; about 400 s.
#
# Predictions, written before the call (step 52's speedup over step 51, hot, paired rounds):
#   read from (call 2, 64 MB of K/V, pairs filling 87-89 %): (4, 16, 4096) 1.02x-1.05x, (2, 32, 4096) 1.02x-1.05x,
#     (1, 16, 16384) 1.06x-1.13x;
#   held out, the rule fires: (2, 16, 8192), (1, 32, 8192), (2, 8, 16384) (64 MB, 87-89 %) 1.02x-1.12x each;
#     (2, 32, 4096, kv8, bf16) (16 MB) and (1, 16, 8192) (32 MB, 688 tiles: 5.2 an SM) 1.01x-1.08x;
#     (7, 16, 4096) (112 MB, 93 %) and (1, 40, 16384) (160 MB, 93 %) 0.99x-1.05x (one section over more K/V
#     than the L2 holds: call 2's counter lost 1.6 % to that at 256 MB, beside the registers' 2.5 %);
#   the rule does not fire, 0.99x-1.01x: (16, 16, 4096, causal), (1, 12, 8192, causal, bf16), (1, 71, 8192, causal,
#     kv1, bf16), (4, 16, 4096) non-causal, (4, 16, 4096, 128, causal);
#   SM balance at (4, 16, 4096, 64, causal): step 52 0.95 or more.
# time.txt's ratios are s52's time over the other's (< 1: s52 faster): a speedup above is the inverse.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-11-29-q-double-buffer
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 200 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "three_wgs_queue_causal_d64" > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"
tail -2 $OUT/gpu_tests.txt | cut -c1-300
timeout 150 python -m lab sanitize --variants three_wgs_queue_causal_d64 --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"
tail -5 $OUT/sanitize_log.txt | cut -c1-200
export EXP_CONFIGS='{"s52": ["three_wgs_queue_causal_d64", {}], "s51": ["three_wgs_causal_d64", {}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,32,4096,64,causal", "1,16,16384,64,causal",
  "2,16,8192,64,causal", "1,32,8192,64,causal", "2,8,16384,64,causal", "2,32,4096,64,causal,kv8,bf16", "1,16,8192,64,causal",
  "7,16,4096,64,causal", "1,40,16384,64,causal",
  "16,16,4096,64,causal", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "4,16,4096,64", "4,16,4096,128,causal"]'
timeout $(( 420 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__inst_executed.sum
for c in s52 s51; do
  [ $(( $(date +%s)-T0 )) -gt 470 ] && break
  timeout 40 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
    python $E/prof_one.py $c 4,16,4096,64,causal > $OUT/ncu_$c.csv 2>&1; echo "ncu $c rc=$? $(( $(date +%s)-T0 )) s"
done
cut -c1-300 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
python $E/ncu_balance.py $OUT/ncu_*.csv
