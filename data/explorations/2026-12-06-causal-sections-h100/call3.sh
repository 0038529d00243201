# Device call 3 of data/explorations/2026-12-06-causal-sections-h100 (issue 46), from the repository root, carry
# [".whl", ".fa3"]: once on an H100 and once on an H200 (the kind the reply names; $OUT/gpu.txt says which).
# Written after call 2 (not run yet): where, by the call's K/V, does the older schedule at 4096-8191 keys
# (m8k: FA_QUEUE_FA3_SECTIONS_MIN_S = 8192) stop beating step 65's (s69), on each GPU? S = 4096 causal D = 128 calls
# of 32 to 512 MB of K/V, two grouped bf16 ones, and two of 6144 keys.
# Prediction, written before the call: on the H100 m8k faster by 0.5-2 % up to 128 MB (as call 2) and slower by
# 0.2-1 % from 256 MB, 192 MB in between; on the H200 m8k within +-0.5 % at 128 MB (as the 2026-12-04 calls),
# 0.5-1.5 % slower from 256 MB, and at 32-64 MB faster by 0-1.5 % (L2 60 MB against 50: a smaller gain than the H100's).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
V=counter_tile_from_2k_d64
export EXP_CONFIGS='{"s69": ["'$V'", {}], "m8k": ["'$V'", {"FA_QUEUE_FA3_SECTIONS_MIN_S": 8192}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["1,16,4096,128,causal", "2,16,4096,128,causal", "4,16,4096,128,causal", "6,16,4096,128,causal",
  "8,16,4096,128,causal", "16,16,4096,128,causal", "4,32,4096,128,causal,kv8,bf16", "8,32,4096,128,causal,kv8,bf16",
  "2,16,6144,128,causal", "4,16,6144,128,causal"]'
timeout 200 python $X/exp.py time 3.0 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
