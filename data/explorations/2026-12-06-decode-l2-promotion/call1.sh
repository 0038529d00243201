# Device call 1 of data/explorations/2026-12-06-decode-l2-promotion (issue 50), from the repository root, carry
# [".whl"]; once on an H100 and, where one is lent, once on an H200 ($OUT/gpu.txt says which). Not run yet.
# The branch end (s57, tensor_maps_prefetched: no L2 promotion on the cache's tensor maps, step 45's choice) against
# itself with 256-byte promotion (p256, step 44's) and 128-byte (p128), each checked on the decode grid first, with
# SDPA's backends, at the decode set's D = 128 shapes and a Falcon-7B control, hot and cold (sweep.py of
# ../2026-12-02-decode-splits; about 250 s with the machine's start).
# Predictions, written before the call (s57 over p256 etc. in table.py's terms: p256's speed over s57's):
#   H100: p256 1.02-1.04x at the batch-64 calls of 1,024 tokens and the mixed batches of 4,096 (where step 45 lost
#     3.4-4.1 % in run 20261205T192124Z-f585548, promotion_h100_run.txt), 1.00-1.03x at the other D = 128 shapes,
#     1.00x +- 0.01 on Falcon-7B; p128 within 0.01 of s57 (on the H200 128-byte promotion timed as none);
#     with p256 the end at or above SDPA's fastest backend at the batch-64 calls (issue 50's target 2: 0.961-0.967x
#     there in that run).
#   H200: p256 0.93-1.00x at the D = 128 shapes hot (step 45 gained 0.7-7.3 % hot there in run
#     20261128T180707Z-4d2adc9, promotion_h200_run.txt), p128 within 0.01 of s57.
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
D=data/explorations/2026-12-02-decode-splits
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
P=FA_DECODE_L2_PROMOTION=CU_TENSOR_MAP_L2_PROMOTION
S="64,32,8,128,1024,bf16 64,64,8,128,1024,bf16 64,28,4,128,1024,bf16 32,32,8,128,4096,mixed,bf16"
S="$S 32,64,8,128,4096,mixed,bf16 32,28,4,128,4096,mixed,bf16 8,32,8,128,8192,bf16 8,28,4,128,8192,bf16"
S="$S 16,32,8,128,32768,q4,page64,bf16 1,32,8,128,131072,bf16 8,71,1,64,8192,bf16"
SWEEP_MODES=hot,cold timeout 300 python $D/sweep.py $OUT s57=tensor_maps_prefetched \
  p256=tensor_maps_prefetched@${P}_L2_256B p128=tensor_maps_prefetched@${P}_L2_128B -- $S > $OUT/log_sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
python $D/table.py $OUT/sweep.json s57 | tee $OUT/table.txt
