# Call 3: K and V handed back apart (draft176.patch: call 1's draft step plus N = 176 wgmmas and knobs, applied to
# this machine's copy only) with FlashAttention-3's 176-key tile at D = 128 in two stages, the producer at 24
# registers so a consumer has 240 (FA3's split), one arrival a thread on the empty barriers (0: no spills; with one
# a warp ptxas spills 284-432 B) or lane 0's predicated one (2). Correctness grid on each, then hot timing.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
D=data/explorations/2026-11-29-kv-apart-two-stages
git apply $D/draft176.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
R='"FA_EXP_APART_P24": 1, "FA_EXP_CMAX": 240'
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}],
  "a176t": ["kv_apart_d128", {'"$R"', "FA_TILE_BC_D128_APART": 176, "FA_EXP_APART_ARRIVE": 0}],
  "a176p": ["kv_apart_d128", {'"$R"', "FA_TILE_BC_D128_APART": 176, "FA_EXP_APART_ARRIVE": 2}],
  "a176tk": ["kv_apart_d128", {'"$R"', "FA_TILE_BC_D128_APART": 176, "FA_EXP_APART_ARRIVE": 0, "FA_EXP_K_AHEAD": 1}],
  "a128t": ["kv_apart_d128", {'"$R"', "FA_EXP_APART_ARRIVE": 0}]}'
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,2048,128", "4,16,4096,128,causal", "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16",
  "4,32,2048,128,causal,kv8,bf16", "2,32,4096,128,kv8,bf16", "4,16,4096,64"]'
EXP_ONLY=a176t,a176p,a176tk,a128t timeout 220 python $X/exp.py check > $OUT/check_176.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check_176.txt | cut -c1-160 | tail -14
timeout $(( 540 - ($(date +%s)-T0) )) python $X/exp.py time 1.0 > $OUT/time_176.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-600 $OUT/time_176.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
