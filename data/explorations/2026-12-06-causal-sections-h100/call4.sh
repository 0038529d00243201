# Device call 4 of data/explorations/2026-12-06-causal-sections-h100 (issue 46), from the repository root, carry
# [".whl", ".fa3"]. Written after call 3 and run right after it on the same H100 (both configurations passed the
# 399-case grid there, so no check here): the K/V size against the count of query heads at S = 4096 causal D = 128.
# Call 3 had m8k 1.010x faster at (4, 16) (128 MB of K/V, 64 query heads) but 0.982x at (8, 32, kv8) (128 MB, 256
# query heads): which of the two sets the boundary? Shapes of 32-256 MB with 48-256 query heads, grouped and not.
# No prediction written: a question, answered by the table.
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
V=counter_tile_from_2k_d64
export EXP_CONFIGS='{"s69": ["'$V'", {}], "m8k": ["'$V'", {"FA_QUEUE_FA3_SECTIONS_MIN_S": 8192}]}'
export EXP_SHAPES='["4,16,4096,128,causal", "3,16,4096,128,causal", "4,16,4096,128,causal,bf16", "4,32,4096,128,causal",
  "2,32,4096,128,causal,kv8,bf16", "2,64,4096,128,causal,kv8,bf16", "6,32,4096,128,causal,kv8,bf16",
  "8,32,4096,128,causal,kv8,bf16", "4,32,4096,128,causal,kv8,bf16", "5,16,4096,128,causal"]'
timeout 300 python $X/exp.py time 3.0 > $OUT/time4.txt 2>&1; echo "time rc=$?"
python $X/exp.py summary $OUT/time4.txt
