# Device call 3 of data/explorations/2026-12-04-half-diagonal-d128 (issue 46), from the repository root, carry [".fa3"].
# Call 2: dup (two copies of the same body, chosen by call 1's vote) ran the non-causal D = 128 rows 1.017x-1.022x
# faster than step 65 (no work saved: ptxas scheduled the copy the non-causal tiles run otherwise; in the counter's
# kernel 27 of its 66 exponentials a 128 keys issue before P V's wait, step 65's 20) and the causal rows 0.969x-1.002x.
# Two forms that make that split by causality, measured here against s65 and dup:
# - ck (FA_HALF_DIAGONAL_D128 = 3): one kernel, the vote on shape.causal alone; causal and non-causal work tiles run
#   separately compiled copies of the body (ptxas: 30 exponentials before the wait in the non-causal copy, 26 in the
#   causal one; path 411 a 128 keys both);
# - nc (FA_CAUSAL_FREE_D128 = 1): step 65's kernels for causal calls, untouched; non-causal D = 128 calls take kernels
#   compiled with shape.causal = false (as FA3's Is_causal = false: 32 exponentials before the wait, path 453).
# Predictions, written before the call:
# - every form passes the grid; dup over s65 again 1.015x-1.025x at the non-causal D = 128 rows;
# - ck over s65 non-causal 1.010x-1.025x, causal 0.990x-1.010x;
# - nc over s65 non-causal 0.995x-1.020x (the longer path against more overlap), causal 1.000x within 0.002 (its
#   causal kernels are step 65's).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-half-diagonal-d128
grep -q FA_CAUSAL_FREE_D128 kernels/knockouts/65_fa3_sections_causal_d128.cu || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s65": ["fa3_sections_causal_d128", {}], "dup": ["fa3_sections_causal_d128", {"FA_HALF_DIAGONAL_D128": 2}],
  "ck": ["fa3_sections_causal_d128", {"FA_HALF_DIAGONAL_D128": 3}], "nc": ["fa3_sections_causal_d128", {"FA_CAUSAL_FREE_D128": 1}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,32,2048,128,kv8,bf16",
  "1,64,8192,128,kv8,bf16", "4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal",
  "16,16,1024,128,causal", "1,64,8192,128,causal,kv8,bf16", "4,16,4096,64"]'
timeout 300 python $X/exp.py time 2.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
