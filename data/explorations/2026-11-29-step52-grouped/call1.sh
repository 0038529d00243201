# Step 52 lost 0.9 % to step 51 at (2, 32, 4096, 64, causal, kv8, bf16) in data/checks/2026-11-29-h200-step52-check
# (predicted 1.01x-1.08x) while it gained 2.8 % at (2, 32, 4096, 64, causal) fp16 with as many tiles (1408).
# This call separates the dtype from the grouping and the K/V bytes. carry [".whl", ".fa3"]; about 150 s.
#
# Hypothesis, written before the call: the grouping, not bf16. Step 51's static pairs walk the query heads of one
# K/V head together and read K/V from L2 when the whole K/V fits (16 MB here): s51 ran 297.0 us against 315.6 for
# the fp16 MHA shape, and the counter's 160 registers (2.4 % in call 2 of 2026-11-29-q-double-buffer) eat the
# balance gain. Predictions (step 52's speedup over step 51, hot, paired rounds; time.txt holds the inverse):
#   (2, 32, 4096, kv8) fp16, (2, 32, 4096, kv8, bf16) again, (2, 32, 4096, kv4, bf16): 0.98x-1.00x;
#   (2, 32, 4096, bf16) MHA: 1.02x-1.04x (as its fp16 twin, 1.028x);
#   (2, 32, 4096, kv16, bf16) (32 MB): 0.99x-1.02x;
#   larger grouped calls, (4, 32, 4096, kv8, bf16) (32 MB, 2816 tiles), (1, 32, 8192, kv8, bf16) (16 MB, 1408 tiles),
#   (1, 32, 16384, kv8, bf16) (32 MB, 2752 tiles): 0.98x-1.03x.
# If the grouped calls lose and the MHA ones gain, step 52's rule leaves grouped K/V (H_kv < H) to step 51.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
export EXP_CONFIGS='{"s52": ["three_wgs_queue_causal_d64", {}], "s51": ["three_wgs_causal_d64", {}]}'
export EXP_SHAPES='["2,32,4096,64,causal,kv8", "2,32,4096,64,causal,kv8,bf16", "2,32,4096,64,causal,kv4,bf16",
  "2,32,4096,64,causal,bf16", "2,32,4096,64,causal", "2,32,4096,64,causal,kv16,bf16",
  "4,32,4096,64,causal,kv8,bf16", "1,32,8192,64,causal,kv8,bf16", "1,32,16384,64,causal,kv8,bf16"]'
timeout 400 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$?"
cut -c1-300 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
