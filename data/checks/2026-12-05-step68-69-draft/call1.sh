# Device call 1 of data/checks/2026-12-05-step68-69-draft (issue 46), from the repository root of a tree with steps 68
# (fa3_sections_counter_d64) and 69 (counter_tile_from_2k_d64) applied (step68-69.patch, or the landing commit);
# carry [".whl", ".fa3"] (data/checks and data/runs moved aside so that the tree fits). About 500 s with the builds.
# - the GPU tests of both steps (tests/test_gpu_correctness.py and test_gpu_streams_and_configurations.py, -k each
#   name) and compute-sanitizer (memcheck, racecheck, synccheck) on both, as lab/studies/landing/land.sh runs them;
# - hot, paired rounds (exp.py of ../../explorations/2026-11-28-kv-apart-d128) of step 67, 68 and 69 and FA3 at causal
#   D = 64 shapes of 2048-4095 keys, the calls step 69's rule changes, small grids among them, and at two of step 68's.
# Predictions, written before the call:
#  - every GPU test passes; the sanitizers report no error;
#  - s68 over s67: 1.008x-1.030x at (4, 16, 4096, 64, causal) and 1.03x-1.09x at (8, 16, 4096, 64, causal) (the
#    exploration's 1.020x and 1.074x, as a define); 1.000x within 0.003 at every shape of 2048-4095 keys;
#  - s69 over s68: 1.02x-1.06x at GPT-2's (4, 12, 2048, 64, causal, bf16) and Falcon-7B's (4, 71, 2048, 64, causal,
#    1 K/V head, bf16); 1.10x-1.25x at (4, 16, 2048, 64, causal) (the exploration's 1.195x); 1.00x-1.10x at
#    (2, 16, 3000, 64, causal) and (8, 16, 2048, 64, causal) (the counter's tile, three or more an SM);
#    0.95x-1.10x at (1, 24, 2048, 64, causal) and (1, 26, 2049, 64, causal), two to 2.2 tiles an SM, which take the
#    counter's tile mirrored, never measured under 4096 keys: the step may lose there; 1.000x within 0.003 at
#    (1, 16, 2048, 64, causal), under two tiles an SM, which keeps its tile;
#  - 1.000x within 0.003 at (4, 16, 4096, 64, causal) (s69 over s68).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
S68=fa3_sections_counter_d64 S69=counter_tile_from_2k_d64
timeout 330 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py \
  tests/test_gpu_streams_and_configurations.py -k "$S68 or $S69" > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
timeout 150 python -m lab sanitize --variants $S68,$S69 --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1
echo "sanitize rc=$? $(( $(date +%s)-T0 )) s: $(tail -2 $OUT/sanitize.txt | tr '\n' ' ' | cut -c1-200)"
export EXP_CONFIGS="{\"s67\": [\"uniform_row0_d128\", {}], \"s68\": [\"$S68\", {}], \"s69\": [\"$S69\", {}]}"
export EXP_SHAPES='["4,12,2048,64,causal,bf16", "4,71,2048,64,causal,kv1,bf16", "4,16,2048,64,causal",
  "8,16,2048,64,causal", "2,16,3000,64,causal", "1,24,2048,64,causal", "1,26,2049,64,causal", "1,16,2048,64,causal",
  "4,16,4096,64,causal", "8,16,4096,64,causal"]'
timeout 150 python $X/exp.py time 2.0 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
