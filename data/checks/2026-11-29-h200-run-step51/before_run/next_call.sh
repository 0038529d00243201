# The next session's first device call (issue 46, issue 48), on the tree with headers.patch
# (data/checks/2026-11-29-kernel-include-dedupe-3) and step51.patch applied and committed: the GPU tests of what the
# two patches touch, the sanitizers on the new end, then step 51 against step 50 hot at the shapes the rule was
# read from and tested on (exploration calls 2 and 4) and at the models rows, beside FA3 and cuDNN, and the
# rescale-in-turn knob and, on the three-warpgroup tile, FA3's register split (a consumer 160) with and without the
# overlapped loop (../../explorations/2026-11-29-ftz-row-max/draft-rescale-in-turn, both patches applied here only;
# at 152 registers the overlapped D = 64 loop spills 80 B and ptxas serializes its wgmmas, at 160 neither).
# carry [".whl", ".fa3"]; about 450 s on a fresh H200.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-11-29-ftz-row-max
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 260 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "three_wgs_causal_d64 or mma_sync or async_pipeline or two_m_tiles or kk_outer_scores or portable_model_inputs" \
  > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -2 $OUT/gpu_tests.txt | cut -c1-300
timeout 90 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py > $OUT/gpu_decode_tests.txt 2>&1
echo "decode tests rc=$? $(( $(date +%s)-T0 )) s"; tail -1 $OUT/gpu_decode_tests.txt
timeout 120 python -m lab sanitize --variants three_wgs_causal_d64,portable_model_inputs --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"
tail -7 $OUT/sanitize_log.txt | cut -c1-200
git apply $E/draft-rescale-in-turn/rescale_in_turn.patch $E/draft-rescale-in-turn/three_wgs_overlap.patch || exit 1
export EXP_CONFIGS='{"s51": ["three_wgs_causal_d64", {}], "s50": ["pipeline_state_d128", {}],
  "rit": ["three_wgs_causal_d64", {"FA_EXP_RESCALE_IN_TURN": 1}],
  "p24": ["three_wgs_causal_d64", {"FA_EXP_THREE_WGS_PRODUCER_REGS": 24}],
  "ov": ["three_wgs_causal_d64", {"FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_SERIAL_D64": 0}]}'
# D = 64: only shapes the three-warpgroup tile takes (ov's overlapped loop reaches every D = 64 tile)
export EXP_SHAPES='["1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "16,16,4096,64,causal", "3,16,8192,64,causal",
  "4,16,4096,64", "1,16,16384,64", "8,32,4096,64", "4,16,4096,128", "4,16,4096,128,causal", "1,16,16384,128,causal",
  "1,32,8192,128,causal,kv8,bf16"]'
EXP_ONLY=rit,p24,ov timeout 170 python $X/exp.py check > $OUT/check_knobs.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check_knobs.txt | cut -c1-160 | tail -7
EXP_ONLY=s51,s50,rit,p24,ov timeout $(( 560 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"; cut -c1-400 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
