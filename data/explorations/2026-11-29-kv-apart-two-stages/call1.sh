# Call 1: (a) K and V handed back apart at D = 128 on step 50 (draft.patch: the draft step 51 kv_apart_d128 and the
# headers it needs, applied to this machine's copy only), in two or three stages, with three ways to arrive on the
# empty barriers and two producer orders; (b) causal D = 64 with step 33's three-CTA tile (and step 32's long tile)
# knocked out of step 50. Correctness grid on each new configuration, then hot timing against step 50, FA3, cuDNN.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
D=data/explorations/2026-11-29-kv-apart-two-stages
git apply $D/draft.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}], "a2": ["kv_apart_d128", {}],
  "a2t": ["kv_apart_d128", {"FA_EXP_APART_ARRIVE": 0}], "a2p": ["kv_apart_d128", {"FA_EXP_APART_ARRIVE": 2}],
  "a2k": ["kv_apart_d128", {"FA_EXP_K_AHEAD": 1}], "a3": ["kv_apart_d128", {"FA_TILE_STAGES_D128_APART": 3}]}'
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
  "2,32,4096,128,kv8,bf16", "4,16,4096,64"]'
EXP_ONLY=a2,a2t,a2p,a2k,a3 timeout 200 python $X/exp.py check > $OUT/check_apart.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check_apart.txt | cut -c1-160 | tail -14
timeout 150 python $X/exp.py time 0.6 > $OUT/time_apart.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}], "no3c": ["pipeline_state_d128", {"FA_THREE_CTAS_D64": 0}],
  "no3c_nolong": ["pipeline_state_d128", {"FA_THREE_CTAS_D64": 0, "FA_WIDE_KV_TILES_LONG_D64": 0}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "4,16,2048,64,causal", "16,16,1024,64,causal", "2,16,8192,64,causal",
  "4,71,2048,64,causal,kv1,bf16", "4,12,2048,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16"]'
timeout $(( 560 - ($(date +%s)-T0) )) python $X/exp.py time 0.5 > $OUT/time_causal64.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
for f in time_apart time_causal64; do cut -c1-600 $OUT/$f.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'; done
