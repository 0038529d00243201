# Device call 2 of data/explorations/2026-12-06-causal-sections-h100 (issue 46), run as one command line on call 1's
# machine, still warm (builds cached), with the session's last device seconds; carry [".whl", ".fa3"]. Written after
# call 1: does m8k's gain at (4, 16, 4096, 128, causal) replicate, and how does it go with the call's K/V size?
# No prediction was written.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1; V=counter_tile_from_2k_d64
export EXP_CONFIGS='{"s69": ["'$V'", {}], "m8k": ["'$V'", {"FA_QUEUE_FA3_SECTIONS_MIN_S": 8192}]}'
export EXP_SHAPES='["4,16,4096,128,causal", "8,16,4096,128,causal", "2,16,4096,128,causal", "4,32,4096,128,causal,kv8,bf16"]'
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/gpu.txt
timeout 150 python data/explorations/2026-11-28-kv-apart-d128/exp.py time 4.0 > $OUT/time.txt 2>&1; echo rc=$?
cut -c1-330 $OUT/time.txt
