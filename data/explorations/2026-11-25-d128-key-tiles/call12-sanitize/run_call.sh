#!/bin/bash
# compute-sanitizer over step 33 with one ring release a warp (FA_EXP_WARP_RELEASE defaulted to 1 in
# this tree), on lab's sanitizer shapes (D = 64 and 128, fp16/bf16, grouped K/V, the three-CTA grids).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
timeout 200 python -m lab sanitize --variants three_ctas_d64 --tools racecheck,synccheck,memcheck --out $OUT/sanitize.json 2>&1 | tail -25 | tee $OUT/sanitize.txt
