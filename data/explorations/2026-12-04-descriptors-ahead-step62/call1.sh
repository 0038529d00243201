# Device call 1 of data/explorations/2026-12-04-descriptors-ahead-step62 (issue 46), from the repository root with carry
# [".whl", ".fa3"]. PREPARED 2026-12-04 (SASS only so far); ran as call 1 the same day (call1/). Puts the drafts in the device's copy of the
# tree (step 62's file plus draft/*.diff into kernels/variants/, draft/manifest_*.toml appended to the manifest), checks them on the
# 389-case grid and times them hot in paired rounds over step 62 (../2026-11-28-kv-apart-d128/exp.py).
# paths.txt: the D = 128 loop's shortest path a warp per 128 keys 414 (s62), 418 (early: V's descriptor shuffle moved
# before S_j's issue, none left between S_j's last HGMMA and P V's first), 453 (ahead: carried a step, it leaves the
# uniform registers).
# Predictions, written before the call:
# - early: 1.003x-1.015x at (4, 16, 4096, 128), (2, 16, 8192, 128), (1, 16, 16384, 128), causal and not, and the
#   grouped bf16 D = 128 rows (PC sampling put 1.5 % of step 62's samples on the R2UR that waits for that shuffle
#   before P V's issue; the warp's issue slots it frees are partly taken by the other warpgroup already); 0.995x-1.01x
#   at (8, 16, 512, 128) and (16, 16, 1024, 128); 1.000x at D = 64 (its kernels unchanged);
# - ahead: 0.96x-0.99x at the D = 128 rows (39 instructions more a 128 keys), 1.000x at D = 64;
# - both pass the grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-descriptors-ahead-step62
# Each draft is step 62's file plus its diff (draft/*.diff).
if ! grep -q v_desc_early kernels/variants/manifest.toml; then
  for d in 62x_v_desc_ahead 62y_v_desc_early; do
    cp kernels/variants/62_rescale_under_s.cu kernels/variants/$d.cu && git apply $E/draft/$d.diff || exit 1
  done
  cat $E/draft/manifest_62x.toml $E/draft/manifest_62y.toml >> kernels/variants/manifest.toml
fi
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s62": ["rescale_under_s", {}], "early": ["v_desc_early", {}], "ahead": ["v_desc_ahead", {}]}'
timeout 120 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
  "4,16,4096,64"]'
timeout 150 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
