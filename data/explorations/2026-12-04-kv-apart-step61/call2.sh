# Device call 2 (issue 46), 2026-12-04, after call1: mc4 (the softmax in two phases, the vote between them, four
# partial max chains a row) ran 1.006x-1.015x over step 61 at the three long non-causal D = 128 rows, 0.990x-1.004x
# elsewhere at D = 128. Which part bought it? explore2.patch is explore.patch plus FA_EXP_ONEPHASE_CHAINS: the
# overlapped loops' row max in that many partial chains inside fa::mma_online_softmax as it is (one phase, step 61's
# vote after P V's wait). Configurations: so1 (two phases, one chain a row: the control for the chains), mc4 again,
# mc8 (eight chains), oc2, oc4, oc8 (one phase, 2 / 4 / 8 chains).
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - mc4 repeats call1 within 0.003 at each row.
# - If the chains are what counts: oc4 and mc4 alike (1.005x-1.015x at the long non-causal rows), so1 0.995x-1.005x.
#   If the two-phase order is: so1 as mc4, oc2-oc8 0.995x-1.005x. Neither is favoured; mc8 and oc8 no better than
#   their four-chain forms (the chains' latency is then hidden).
# - At the counter's causal D = 64 row (its tile is the other overlapped loop), oc* 0.995x-1.01x; so1 / mc* leave
#   it alone (their two phases are in the D = 128 loop only): 0.998x-1.002x.
# - Every form passes the 380-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore2.patch 2>/dev/null || git apply $E/explore2.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "so1": ["conditional_rescale", {"FA_EXP_SOFTMAX_ORDER": 1}],
  "mc4": ["conditional_rescale", {"FA_EXP_SOFTMAX_ORDER": 1, "FA_EXP_MAX_CHAINS": 4}],
  "mc8": ["conditional_rescale", {"FA_EXP_SOFTMAX_ORDER": 1, "FA_EXP_MAX_CHAINS": 8}],
  "oc2": ["conditional_rescale", {"FA_EXP_ONEPHASE_CHAINS": 2}],
  "oc4": ["conditional_rescale", {"FA_EXP_ONEPHASE_CHAINS": 4}],
  "oc8": ["conditional_rescale", {"FA_EXP_ONEPHASE_CHAINS": 8}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,16,4096,128,causal",
  "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,16,4096,64,causal"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python - $OUT/time.txt <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("built"): continue
    shape = line.split()[0]
    cells = re.findall(r"s61/(\w+) ([0-9.]+) \[", line)
    print(f"{shape:32s} " + " ".join(f"{k}={v}" for k, v in cells))
PY
