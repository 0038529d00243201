#!/bin/bash
# exploration call 1: 3 CTAs per SM at D = 64 (64-key tiles, or 128-key tiles as two N = 64 wgmmas),
# one m64n192k16 for step 32's long tile; then where the models set's timing goes (cProfile of a replicate)
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/32_wide_kv_tiles_long_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=wide_kv_tiles_long_d64
CF='{"base":["'$V'",{}],
"c3b64s4":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":64,"FA_TILE_STAGES_D64":4}],
"c3b64s3":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":64,"FA_TILE_STAGES_D64":3}],
"c3b128s2x":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":128,"FA_TILE_STAGES_D64":2,"FA_EXP_SPLIT_SS":1}],
"c2b64s4":["'$V'",{"FA_TILE_BC_D64":64,"FA_TILE_STAGES_D64":4}],
"n192":["'$V'",{"FA_EXP_N192":1}]}'
timeout 200 python .scratch/exp.py "$CF" "3,3,777,64,causal;1,4,100,64;2,5,1000,64;3,6,555,64,causal,kv3,bf16;2,8,300,64,kv1;1,2,2000,64,causal;1,2,4097,64;1,3,4100,64,causal,kv1,bf16" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 150 python .scratch/exp.py "$CF" "4,16,512,64;8,16,512,64;32,8,512,64;1,8,512,64;4,16,512,64,causal;8,16,512,64,causal;64,16,256,64;16,16,1024,64;8,16,2048,64;4,71,2048,64,causal,kv1,bf16;4,12,2048,64,causal,bf16;4,16,4096,64;2,16,8192,64;1,16,16384,64;1,71,8192,64,causal,kv1,bf16" nocheck 1.5 2>&1 | grep -v "^built" | tee $OUT/exp1.txt
git checkout kernels/variants/manifest.toml 2>/dev/null || sed -i 's#^\#twin#twin = "knockouts/32_wide_kv_tiles_long_d64.cu"#' kernels/variants/manifest.toml
# where the models set's wall time goes
export LAB_GIT_SHA=exploration LAB_GIT_DIRTY=1
timeout 200 python -m lab.pipeline --shapes models --check none --profile 0 --stop-after timing --no-report > $OUT/models_log.txt 2>&1
RUN=$(ls -t data/runs | head -1); echo "run $RUN" | tee -a $OUT/models_log.txt
python - <<PY | tee $OUT/models_seconds.txt
import json,glob
for f in sorted(glob.glob("data/runs/$RUN/replicates/timing/r*.json")):
    d=json.load(open(f)); print(f, d.get("seconds"), d.get("startup_s"), [(n["shape"], n.get("seconds")) for n in d["notes"]])
PY
timeout 90 python -m cProfile -o $OUT/models_r1.prof -m lab.studies.replicates data/runs/$RUN timing --replicate 1 > $OUT/models_prof_log.txt 2>&1
python -c "import pstats; s=pstats.Stats('$OUT/models_r1.prof'); s.sort_stats('cumulative').print_stats(45); s.sort_stats('tottime').print_stats(25)" > $OUT/models_prof.txt 2>&1
tail -5 $OUT/models_prof.txt
