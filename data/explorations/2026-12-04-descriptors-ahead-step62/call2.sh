# Device call 2 of data/explorations/2026-12-04-descriptors-ahead-step62 (issue 46), from the repository root with carry
# [".whl", ".fa3"]. PREPARED 2026-12-04 after call 1, RAN 2026-12-04 (stop 87; results in call2/ and the README). Call 1: `early` ran 1.007x-1.014x over step 62 at
# the long fp16 D = 128 rows but 0.973x and 0.979x at the two grouped bf16 rows; the bf16 loop is the fp16 one
# (paths_bf16.txt), so the rows' other difference, 8 K/V heads for 32 query heads, is the suspect. This call
# separates grouping from the element type at the two losing rows, each in four forms, `early` over step 62, hot,
# paired rounds (../2026-11-28-kv-apart-d128/exp.py).
# Prediction, written before the call: grouping, not bf16, is the cause: the kv8 rows 0.97x-0.99x in fp16 and bf16
# alike, the multi-head ones (32 K/V heads) 1.005x-1.015x in both; (4, 16, 4096, 128) 1.005x-1.015x as in call 1.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-descriptors-ahead-step62
# The draft is step 62's file plus its diff (draft/62y_v_desc_early.diff).
if ! grep -q v_desc_early kernels/variants/manifest.toml; then
  cp kernels/variants/62_rescale_under_s.cu kernels/variants/62y_v_desc_early.cu &&
    git apply $E/draft/62y_v_desc_early.diff || exit 1
  cat $E/draft/manifest_62y.toml >> kernels/variants/manifest.toml
fi
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s62": ["rescale_under_s", {}], "early": ["v_desc_early", {}]}'
export EXP_SHAPES='["1,32,8192,128,causal,kv8,bf16", "1,32,8192,128,causal,kv8", "1,32,8192,128,causal,bf16",
  "1,32,8192,128,causal", "4,32,2048,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8", "4,32,2048,128,causal,bf16",
  "4,32,2048,128,causal", "4,16,4096,128"]'
timeout 150 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
