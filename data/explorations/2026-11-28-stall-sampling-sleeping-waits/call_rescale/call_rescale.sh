source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply data/explorations/2026-11-28-stall-sampling-sleeping-waits/call_rescale/rescale_exp.patch || exit 1
export EXP_CONFIGS='{"s36": {}, "rescale": {"FA_EXP_RESCALE_IN_TURN": 1}}'
export EXP_SHAPES='["4,16,4096,128", "1,16,16384,128", "4,16,4096,128,causal", "1,16,16384,128,causal", "16,16,1024,128", "1,32,8192,128,causal,kv8,bf16", "4,16,4096,64"]'
X=data/explorations/2026-11-28-stall-sampling-sleeping-waits/call_sleep/exp_sleep.py  # ran as .scratch/stalls/exp_cfg.py, the same code
T0=$(date +%s)
python $X check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"; grep check $OUT/check.txt; grep -A3 FAILED $OUT/check.txt | head
python $X time 1.5 > $OUT/time_1.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-250 $OUT/time_1.txt | grep -v built
