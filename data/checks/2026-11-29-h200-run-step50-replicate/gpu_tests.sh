# GPU tests after the second headers patch (issue 48: device-attribute cache, Q/K/V carving, wmma GEMM loop,
# descriptor steps, epilogue row sum; byte-identical SASS) and before the recorded run: the wmma steps (the shared
# GEMM loop), the sm_90a branch end (carving, descriptors, row sum, the attribute cache through
# multiprocessor_count), the tile queue (l2_cache_bytes), launch plumbing and the decode steps' tensor maps.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 420 python -m pytest -q -m gpu -x tests/test_gpu_correctness.py tests/test_gpu_launch_plumbing.py \
  tests/test_tile_queue.py tests/test_gpu_decode.py -k "wmma or pipeline_state_d128 or plumbing or tile_queue or counter or tensor_map_tiles" \
  > $OUT/pytest_gpu.txt 2>&1; echo "pytest rc=$?"; tail -3 $OUT/pytest_gpu.txt
