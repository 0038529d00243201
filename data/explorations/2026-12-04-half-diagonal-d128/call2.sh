# Device call 2 of data/explorations/2026-12-04-half-diagonal-d128 (issue 46), from the repository root, carry [".fa3"].
# Call 1 refuted the idea at S <= 4096 causal (hd 0.999x at (4, 16, 4096, 128, causal), 0.983x at S = 1024) but hd ran
# non-causal (4, 16, 4096, 128) 1.011x faster, where it runs no other work: the non-causal path is the same source, and
# ptxas scheduled it otherwise (paths: 411 instructions a 128 keys against 414; 25 exponentials before P V's wait
# against 22). dup (FA_HALF_DIAGONAL_D128 = 2) is the control: the same vote and two bodies, both full (a distinct
# type, the same code); ptxas gives it 411 instructions too, 29 exponentials before the wait.
# Predictions, written before the call:
# - dup passes the grid; dup over s65 at the non-causal D = 128 rows 1.005x-1.015x (the schedule, not the work),
#   and at the causal rows 1.003x-1.012x; hd over dup at causal S >= 8192 1.000x-1.004x (the work saved, 0.4-0.8 %),
#   at S = 4096 0.995x-1.005x.
# - Refuted (a schedule effect not worth a step) if dup over s65 at (2, 16, 8192, 128) and (1, 16, 16384, 128)
#   non-causal is under 1.003x.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-half-diagonal-d128
grep -q FA_HALF_DIAGONAL_D128 kernels/knockouts/65_fa3_sections_causal_d128.cu || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s65": ["fa3_sections_causal_d128", {}], "dup": ["fa3_sections_causal_d128", {"FA_HALF_DIAGONAL_D128": 2}],
  "hd": ["fa3_sections_causal_d128", {"FA_HALF_DIAGONAL_D128": 1}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,32,2048,128,kv8,bf16",
  "1,64,8192,128,kv8,bf16", "4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal",
  "16,16,1024,128,causal", "1,64,8192,128,causal,kv8,bf16"]'
timeout 300 python $X/exp.py time 3 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
