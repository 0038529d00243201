# Device call 1 of data/explorations/2026-12-04-kv-released-apart-step62 (issue 46), run from the repository root with
# carry [".whl", ".fa3"]. explore.patch (on 64ab828) gives step 62 and its twin FA_EXP_KV_APART: at D = 128 each ring
# stage's K and V have barriers of their own (fa::KvRingApart), the producer loads K_0, then K_t before V_{t-1}
# (fa::tma::produce_kv_tiles_apart), and the consumers hand K_j back once S_j has landed, V_{j-1} after P V's wait,
# waiting on V_{j-1} just before K_j (a wait loop between two wgmmas made ptxas serialize every wgmma: drafts 1-2);
# plus the wide-key-tiles exploration's N = 176 wrapper and register knobs. With the macros off step 62 and its twin
# compile to their committed SASS byte for byte (checked). Call 1 of ../2026-12-04-wide-key-tiles-step62 found
# two stages lose 19-27 % with K and V sharing a stage (t128s2 0.731x-0.814x): a stage goes back only after both
# warpgroups' P V, half an iteration before the next K is needed.
# paths.txt (SASS): the D = 128 loop's shortest path a warp per 128 keys 414 (s62) -> 424 with K and V apart
# (two waits, two arrivals), 408 at 176 keys, 399 at 192; no local loads or stores on the path (13-37 B elsewhere
# in the static list's kernel at 176-192 keys without 240 registers); at 176 and 192 keys ptxas issues no exponential
# before P V's wait.
# Predictions (hot, paired rounds, each over s62, the number exp.py prints), written before the call:
# - a128 (apart, 3 stages): 0.98x-1.01x everywhere at D = 128 (+10 instructions; the 2026-11-28 draft: +1-2 % at one
#   K/V head a query head, -1-2 % grouped); 1.00x at D = 64 (unchanged kernels);
# - a128s2 (apart, 2 stages): within 0.01 of a128 at every row (apart, two stages are enough: t128s2's loss gone);
# - a176r (apart, 176 keys, 2 stages, 24/240 registers): 0.99x-1.03x at the long non-causal rows (2, 16, 8192, 128),
#   (1, 16, 16384, 128), (4, 16, 4096, 128); 0.85x-0.97x at (16, 16, 1024, 128) and (8, 16, 512, 128); 0.95x-1.01x
#   causal;
# - a176 (the same at 232 registers): 0.00-0.02 below a176r at the long rows;
# - a192r: within 0.015 of a176r at the long rows, below it at S <= 1024;
# - every configuration passes the 389-case grid, rare_path.py, and racecheck / synccheck at the sanitizer's shapes.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
N=data/explorations/2026-12-04-kv-released-apart-step62
git apply --check -R $N/explore.patch 2>/dev/null || git apply $N/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
A='"FA_EXP_KV_APART": 1'; W='"FA_TILE_STAGES_D128": 2, "FA_EXP_P24": 1, "FA_EXP_CMAX": 240'
export EXP_CONFIGS="{\"s62\": [\"rescale_under_s\", {\"FA_EXP_P24\": 0}],
  \"a128\": [\"rescale_under_s\", {$A}],
  \"a128s2\": [\"rescale_under_s\", {$A, \"FA_TILE_STAGES_D128\": 2}],
  \"a176r\": [\"rescale_under_s\", {$A, \"FA_TILE_BC_D128\": 176, $W}],
  \"a176\": [\"rescale_under_s\", {$A, \"FA_TILE_BC_D128\": 176, \"FA_TILE_STAGES_D128\": 2}],
  \"a192r\": [\"rescale_under_s\", {$A, \"FA_TILE_BC_D128\": 192, $W}]}"
timeout 150 python $E/rare_path.py > $OUT/rare_path.txt 2>&1; echo "rare rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/rare_path.txt | cut -c1-240
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16",
  "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64,causal", "4,16,4096,64"]'
timeout ${TIME_END:-240} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
SAN=$(python -c "from lab.measure.sanitize import sanitizer; print(sanitizer())")
for tool in racecheck synccheck; do
  timeout 90 $SAN --tool $tool --error-exitcode 3 --kernel-name kns=attention_fwd \
    python $N/sanitize_configs.py a128s2,a176r > $OUT/sanitize_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -c '^ran ' $OUT/sanitize_$tool.txt) ran; $(grep -E 'SUMMARY' $OUT/sanitize_$tool.txt | tail -1) $(( $(date +%s)-T0 )) s"
done
python $X/exp.py summary $OUT/time.txt
