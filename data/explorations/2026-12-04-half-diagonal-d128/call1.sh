# Device call 1 of data/explorations/2026-12-04-half-diagonal-d128 (issue 46), from the repository root, carry
# [".whl", ".fa3"]. PREPARED 2026-12-04 (stop 88, CPU only: explore.patch compiles for sm_90a without spills or
# ptxas's wgmma-serialization warnings, paths.txt), NOT YET RUN. Applies explore.patch in the device's copy where the
# tree lacks it (at its default, FA_HALF_DIAGONAL_D128 = 0, the D = 128 kernels' counts are step 65's, paths.txt).
# Idea: at causal D = 128 (128-row work tiles, 64 rows a warpgroup, 128-key tiles) warpgroup 0's diagonal key tile
# holds keys 64 .. 127 past every one of its rows; step 65 (and FA3) run its S and P V in full. hd runs them on the
# first 64 keys (wgmma N = 64 for S, 4 of 8 k-steps for P V), chosen once a work tile around the whole body.
# GEMM work saved: half of one warpgroup's block a work tile, 1 / (2 x 2 x mean blocks): 1.5 % at S = 4096, 0.8 % at
# 8192, 0.4 % at 16384, 2.9 % at 2048, 5.6 % at 1024 (the gaps to FA3 in 20261204T144711Z-4f6121c: 2.0 %, 1.0 %,
# 0.7 % at the causal D = 128 rows).
# Predictions, written before the call:
# - every configuration passes the 393-case grid (fp16 and bf16, ragged S, grouped);
# - off (the patch at its default) over s65: 1.000x within 0.003 everywhere (the same counts);
# - hd over s65, hot, paired rounds: (4, 16, 4096, 128, causal) and (8, 16, 4096, 128, causal) 1.006x-1.015x,
#   (2, 16, 8192, 128, causal) 1.003x-1.008x, (1, 16, 16384, 128, causal) 1.001x-1.004x, (16, 16, 1024, 128,
#   causal) 1.02x-1.05x, (4, 32, 2048, 128, causal, kv8, bf16) 1.01x-1.025x, the S = 8192 grouped rows
#   1.003x-1.008x; non-causal (4, 16, 4096, 128) 1.000x within 0.003. Refuted if the S = 4096 causal rows gain
#   under 0.3 % (the tensor pipe is then not what the diagonal tile waits on).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-half-diagonal-d128
grep -q FA_HALF_DIAGONAL_D128 kernels/knockouts/65_fa3_sections_causal_d128.cu || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s65": ["fa3_sections_causal_d128", {}], "off": ["fa3_sections_causal_d128", {"FA_HALF_DIAGONAL_D128": 0}],
  "hd": ["fa3_sections_causal_d128", {"FA_HALF_DIAGONAL_D128": 1}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "8,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal",
  "16,16,1024,128,causal", "4,32,2048,128,causal,kv8,bf16", "1,32,8192,128,causal,kv8,bf16", "1,64,8192,128,causal,kv8,bf16",
  "4,16,4096,128"]'
timeout 200 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
