# Device call 2 of the softmax-issue exploration: where step 28's and cuDNN's warps stall, per SASS
# instruction (Nsight Compute's source counters), at one D = 64 and one D = 128 shape.
source .whl/prelude.sh && export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-23-softmax-issue/explore_softmax.py
export VARIANTS=${VARIANTS:-model_inputs}
mkdir -p $OUT/c2
for sh in ${NCU_SHAPES:-4,16,16,4096,64,fp16 4,16,16,4096,128,fp16}; do
  n=${sh//,/_}
  NCU_SHAPE=$sh ncu --clock-control none --section SourceCounters --section WarpStateStats --section ComputeWorkloadAnalysis \
    -k regex:"attention|cudnn" -o $OUT/c2/prof_$n python $X > $OUT/c2/ncu_log_$n.txt 2>&1
  ncu --import $OUT/c2/prof_$n.ncu-rep --page source --csv --print-source sass > $OUT/c2/sass_$n.csv 2>&1
  ncu --import $OUT/c2/prof_$n.ncu-rep --page details --csv > $OUT/c2/details_$n.csv 2>&1
done
ls -la $OUT/c2; tar -C $OUT -czf $OUT/call2.tgz c2 && rm -rf $OUT/c2
