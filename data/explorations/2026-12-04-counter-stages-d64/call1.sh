# Device call 1 of data/explorations/2026-12-04-counter-stages-d64 (issue 46), from the repository root, carry [".fa3"].
# The causal D = 64 rows that take the counter's three-warpgroup tile (192 x 128, kind 4) trail FA3: (4, 16, 4096, 64,
# causal) 0.978x hot and 0.948x [0.925, 0.972] sustained in step 66's run. FA3's kernel there is 192 x 128 with two
# K/V stages (lab.studies.sass_compare); ours takes st64 = FA_TILE_STAGES_D64 = 3 (the static list's three-warpgroup
# tile took two with step 53; on the counter's kernel, then in series, two stages measured 1.002x in duration,
# ../2026-12-01-two-stages-d64). Since step 59 that kernel overlaps S with P V. st2: FA_TILE_STAGES_D64 = 2 on step 67
# (the short D = 64 tile, kind 0, takes st64 too: its rows move as well).
# Predictions, written before the call: st2 passes the grid; over s67 0.99x-1.02x at the counter's causal D = 64 rows
# ((4, 16, 4096, 64, causal), Falcon-7B's and GPT-2's causal rows at S = 8192); 0.97x-1.01x at the short tile's rows
# ((8, 16, 512, 64, causal), (8, 16, 512, 64)); 1.000x at the D = 128 control.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s67": ["uniform_row0_d128", {}], "st2": ["uniform_row0_d128", {"FA_TILE_STAGES_D64": 2}]}'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,64,causal", "1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16",
  "8,16,512,64,causal", "8,16,512,64", "4,16,4096,128,causal"]'
timeout 120 python $X/exp.py time 2.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
