# Call 5: the pipeline-state draft (draft-pipeline-state/, applied to this machine's copy only as step 50) against
# step 49: its correctness grid, then hot timing at D = 128 and D = 64.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
D=data/explorations/2026-11-29-three-wgs-d64/draft-pipeline-state
V=kernels/variants; cp $V/49_three_warpgroups_d64.cu /tmp/49.cu && git apply $D/pipeline_state.patch \
  && mv $V/49_three_warpgroups_d64.cu $V/50_pipeline_state.cu && cp /tmp/49.cu $V/49_three_warpgroups_d64.cu \
  && cat $D/manifest_50.toml >> $V/manifest.toml || exit 1
export EXP_CONFIGS='{"s49": ["three_warpgroups_d64", {}], "p50": ["pipeline_state", {}]}'
export EXP_SHAPES='["4,16,4096,128", "4,16,4096,128,causal", "1,16,16384,128", "1,32,8192,128,causal,kv8,bf16", "16,16,1024,128", "4,16,4096,64"]'
EXP_ONLY=p50 timeout 90 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$?"; grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-200
timeout 120 python $X/exp.py time 0.5 > $OUT/time_p50.txt 2>&1; echo "time rc=$?"
cut -c1-400 $OUT/time_p50.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
