source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
sed -i 's#^twin = "knockouts/31_tma_store_d128.cu"#\#twin#' kernels/variants/manifest.toml
V=tma_store_d128
CF='{"base":["'$V'",{}],
"poly8":["'$V'",{"FA_EXP_POLY_EVERY":8}],
"poly4":["'$V'",{"FA_EXP_POLY_EVERY":4}],
"poly3":["'$V'",{"FA_EXP_POLY_EVERY":3}],
"poly2":["'$V'",{"FA_EXP_POLY_EVERY":2}]}'
python .scratch/exp.py "$CF" "3,3,777,64,causal;2,5,1000,64;3,6,555,64,causal,kv3,bf16;2,5,1000,128;2,4,300,128,causal,kv2,bf16" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
python .scratch/exp.py "$CF" "4,16,512,64;8,16,512,64;32,8,512,64;4,16,512,64,causal;8,16,512,64,causal;4,16,4096,64;4,16,4096,64,causal;64,16,256,64;16,16,1024,64;1,16,16384,64;4,71,2048,64,causal,kv1,bf16;1,71,8192,64,causal,kv1,bf16;4,12,2048,64,causal,bf16;4,16,4096,128;16,16,1024,128;64,16,256,128;1,16,16384,128;4,32,2048,128,causal,kv8,bf16;1,64,8192,128,causal,kv8,bf16" nocheck 1.5 2>&1 | grep -v "^built" | tee $OUT/exp2.txt
for L in base poly4 cudnn; do
  case $L in base) DEF='{}';; poly4) DEF='{"FA_EXP_POLY_EVERY":4}';; cudnn) DEF='{}';; esac
  ncu --clock-control none --nvtx --nvtx-include "prof/" --csv --page raw --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SchedulerStats \
    python .scratch/ncu_target.py $L $V "$DEF" 4,16,4096,64 > $OUT/ncu_$L.csv 2>$OUT/ncu_$L.err || tail -5 $OUT/ncu_$L.err
done
ls -la $OUT
