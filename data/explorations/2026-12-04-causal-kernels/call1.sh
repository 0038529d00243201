# Device call 1 of data/explorations/2026-12-04-causal-kernels (issue 46), from the repository root, carry [".fa3"].
# Step 66 gave non-causal D = 128 calls kernels with shape.causal the constant false (+2.5-2.9 %, a schedule effect).
# The symmetric form for the causal calls, as FA3 compiles Is_causal = true apart (explore.patch, on step 66's twin):
# - ck1 (FA_EXPLORE_CAUSAL_KERNELS = 1): causal D = 128 calls take kernels with shape.causal the constant true;
# - ck2 (= 2): every causal call does (D = 64's tiles too).
# SASS (loops.txt, fp16): the causal kernels' unmasked loop barely moves (path 413 / 417 against 414 a 128 keys, 20
# exponentials before P V's wait in both); the masked loop 608 against 544 (counter) and 611 against 640 (static list).
# Predictions, written before the call:
# - every configuration passes the grid;
# - ck1 over s66 at the causal D = 128 rows 0.995x-1.010x (the hot loop unchanged), 1.000x within 0.003 elsewhere;
# - ck2 at the causal D = 64 rows 0.99x-1.02x (not derived: the SASS of those kernels was not read), the D = 128
#   rows as ck1.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-causal-kernels
grep -q FA_EXPLORE_CAUSAL_KERNELS kernels/knockouts/66_non_causal_kernels_d128.cu || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s66": ["non_causal_kernels_d128", {}], "ck1": ["non_causal_kernels_d128", {"FA_EXPLORE_CAUSAL_KERNELS": 1}],
  "ck2": ["non_causal_kernels_d128", {"FA_EXPLORE_CAUSAL_KERNELS": 2}]}'
timeout 220 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal",
  "1,64,8192,128,causal,kv8,bf16", "4,16,4096,64,causal", "8,16,512,64,causal", "1,71,8192,64,causal,kv1,bf16",
  "4,12,2048,64,causal,bf16", "4,16,4096,128", "4,16,4096,64"]'
timeout 300 python $X/exp.py time 2.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
