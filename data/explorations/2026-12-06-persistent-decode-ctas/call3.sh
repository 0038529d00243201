# Device call 3 of this exploration (issue 50), from the repository root on one H100 (carry .whl), with step72.patch
# applied and diag_merge.py run on the tree first: steps 70 and 72, each with and without its merge and write, timed
# hot at two Falcon-7B calls and two Llama-3-8B calls (merge_cost.py).
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-persistent-decode-ctas
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 220 python $E/merge_cost.py $OUT 64,71,1,64,1024,bf16 8,71,1,64,8192,bf16 8,32,8,128,8192,bf16 \
  64,32,8,128,1024,bf16 > $OUT/log_merge_cost.txt 2>&1
echo "merge_cost rc=$?"; cat $OUT/gpu.txt; grep -E "^hot|Error|Traceback" $OUT/log_merge_cost.txt | tail -8
