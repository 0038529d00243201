# Device call 2 of data/explorations/2026-12-04-causal-kernels (issue 46), from the repository root, carry [".fa3"].
# Call 1 refuted causal kernels with shape.causal a constant (0.978x-0.992x at the long causal D = 128 rows). Reading
# the loops' SASS side by side (uniform.txt) shows what step 66's non-causal kernels have and the causal ones lack: their
# K/V ring's stage, its parity and the wgmma descriptors live in uniform registers; in the causal kernels in vector
# ones, each tile paying two SHFL.IDX + R2UR pairs before its wgmmas can issue. The cause: each warp's first row,
# row0 = wg_row0 + (tid % 128) / 32 * 16, is warp-uniform but the compiler cannot know it, and the prologue's softmax
# branches on it for causal calls only (the diagonal test), after which the compiler treats the ring's state as
# divergent. ur (FA_EXPLORE_UNIFORM_ROW0 = 1): row0 read through a shuffle from lane 0. SASS (fp16): the causal D = 128
# loops become the non-causal kernels' form (path 452-453 a 128 keys, no SHFL.IDX or R2UR, 97-98 uniform instructions
# against 29), so does the counter's causal D = 64 tile's (path 404-408, 57-60 uniform against 23-25); the non-causal
# D = 128 kernels are unchanged.
# Predictions, written before the call:
# - ur passes the grid;
# - ur over s66: 1.015x-1.035x at the long causal D = 128 rows (step 66's gain for the same change of loop form), so
#   1.00x FA3 or more there; 1.00x-1.03x at (4, 16, 4096, 64, causal); 1.000x within 0.003 at (4, 16, 4096, 128);
#   0.99x-1.02x at the other D = 64 rows (their loops move a little).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-causal-kernels
grep -q FA_EXPLORE_UNIFORM_ROW0 kernels/knockouts/66_non_causal_kernels_d128.cu || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s66": ["non_causal_kernels_d128", {}], "ur": ["non_causal_kernels_d128", {"FA_EXPLORE_UNIFORM_ROW0": 1}]}'
timeout 220 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal",
  "1,64,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64,causal", "8,16,512,64,causal",
  "1,71,8192,64,causal,kv1,bf16", "4,12,2048,64,causal,bf16", "4,16,4096,128", "4,16,4096,64", "8,16,512,64",
  "8,16,512,128,causal"]'
timeout 300 python $X/exp.py time 3 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
