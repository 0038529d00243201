# Step 54 (chunks_one_cta_an_sm, the decode branch's next step), drafted in the working tree: its build, the decode
# GPU tests for it, memcheck and racecheck over the decode grid, then every decode set shape hot and cold against
# step 47 and SDPA's backends (the exploration's sweep.py, rounds interleaved). About 200 s.
# Expectation (the step's header): 1.02-1.10x over step 47 at (8, 32 | 64, 8, 128, 8192), (8, 28, 4, 128, 8192),
# (1, 32, 8, 128, 131072) and (8, 64, 8, 128, 131072), hot and cold; 0.99-1.01x at every other set shape.
set -u
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 SWEEP_MODES=hot,cold
X=data/explorations/2026-12-02-decode-splits
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
python -c "from lab.kernels.build import build_all; build_all(['merge_side_by_side', 'chunks_one_cta_an_sm'])" > $OUT/build.txt 2>&1
timeout 150 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k chunks_one_cta_an_sm > $OUT/pytest_gpu_decode.txt 2>&1
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
timeout 90 compute-sanitizer --tool memcheck python $G chunks_one_cta_an_sm > $OUT/san.txt 2>&1; echo "memcheck rc $?" >> $OUT/san.txt
timeout 120 compute-sanitizer --tool racecheck python $G chunks_one_cta_an_sm >> $OUT/san.txt 2>&1; echo "racecheck rc $?" >> $OUT/san.txt
S=$(python -c "from lab.studies.shapes import decode_shapes; print(' '.join(s.spec for s in decode_shapes()))")
timeout 200 python $X/sweep.py $OUT s47=merge_side_by_side s54=chunks_one_cta_an_sm -- $S > $OUT/sweep.txt 2>&1; echo "sweep rc=$?"
tail -n 2 $OUT/build.txt; tail -n 2 $OUT/pytest_gpu_decode.txt; grep -E "rc |ERROR SUMMARY|SUMMARY|failed" $OUT/san.txt
grep -E "^check|bf16|Error|Traceback" $OUT/sweep.txt | cut -c1-200 | tail -40
