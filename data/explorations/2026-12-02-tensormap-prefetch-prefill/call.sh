# Issue 46 (and the bar at S = 512): step 53's producer asks the copy engine for its Q, K, V and O tensor maps
# (prefetch.tensormap) first thing, before the barriers' init and the scheduler, as FlashAttention-3's producers do
# (924 UTMACCTL.PF in its library, none in ours: ../../checks/2026-12-02-step57-decode-draft). prefetch_maps.patch
# (the twin, behind FA_EXP_PREFETCH_MAPS; on the device copy only) adds the four prefetches to every attention_fwd
# kernel (sass_counts.txt). ../2026-11-28-kv-apart-d128/exp.py checks both configurations on the correctness grid,
# then times them hot, paired round by round. carry [".whl"]; about 200 s.
# Hypothesis: every persistent CTA's first Q box waits for the map's read; at S = 512 a call lasts 10-40 us, so that
# read is a per cent or so of it; at S >= 4096 (ms) nothing.
# Predictions, written before the call (pf over s53, hot): 1.00x-1.03x at the S = 512 rows (1, 8 | 4, 16 | 8, 16,
# 512, 64), causal and not, and (16, 16, 1024, 128); 0.99x-1.01x at (4, 16, 4096, 64 | 128) and (1, 16, 16384, 128).
# Correctness: both pass the grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-tensormap-prefetch-prefill
git apply $E/prefetch_maps.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}], "pf": ["two_stages_three_wgs_d64", {"FA_EXP_PREFETCH_MAPS": 1}]}'
export EXP_SHAPES='["1,8,512,64", "1,8,512,64,causal", "4,16,512,64", "4,16,512,64,causal", "8,16,512,64",
  "8,16,512,64,causal", "16,16,1024,128", "4,16,4096,64", "4,16,4096,128", "1,16,16384,128"]'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -12
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
timeout $(( 330 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built
