# Call 3 (issue 46): call 2's counter without L2 sections (qn24) balanced the three-warpgroup tile's causal D = 64
# launches (SMs active 0.982 of the busiest, as FA3) and gained 1.03x-1.11x over step 51 at 64 heads or fewer,
# but lost 2.5-4 % at 128 and 256 heads (no sections: every head's K/V at once). Can the counter keep sections?
# q_buffers_sections.patch adds two knobs to fa/tile_queue.cuh: FA_EXP_QUEUE_TILES_PER_CTA (the tiles a CTA the
# last section must hold for the counter, 4) and FA_EXP_SECTION_TILES_PER_CTA (> 0: no more sections than leave
# each this many tiles a CTA). qs1: step 35's sections, the counter whenever the last holds a tile a CTA;
# qsec: sections of at least 4 tiles a CTA, the counter where the last holds 2. Against the static list (st).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-11-29-q-double-buffer
T0=$(date +%s)
git apply $E/q_buffers_sections.patch || exit 1
F='"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 0, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_THREE_WGS_COUNTER": 1'
export EXP_CONFIGS='{"st": ["three_wgs_causal_d64", {"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 0}],
  "s51": ["three_wgs_causal_d64", {}],
  "qn24": ["three_wgs_causal_d64", {'"$F"', "FA_QUEUE_L2_SECTIONS": 0}],
  "qs1": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_QUEUE_TILES_PER_CTA": 1}],
  "qsec": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_SECTION_TILES_PER_CTA": 4, "FA_EXP_QUEUE_TILES_PER_CTA": 2}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "8,16,4096,64,causal", "16,16,4096,64,causal", "1,16,16384,64,causal",
  "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16"]'
EXP_ONLY=qs1,qsec timeout 100 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-160 | tail -5
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
timeout $(( 150 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
