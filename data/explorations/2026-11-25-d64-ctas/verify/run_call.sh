#!/bin/bash
# step 33 verification, call A: build, correctness of step 33 and its knock-outs on the full grid,
# compute-sanitizer, and a first read against step 32 and cuDNN
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['three_ctas_d64']+[k.impl for k in sw.knockouts('three_ctas_d64', sw.load()[0])]))")
echo $KO > $OUT/ko.txt
python -m lab build --variants wide_kv_tiles_long_d64,$KO > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; awk '$4 !~ /^0\/0/ && NF>=7' $OUT/build.txt | grep -v "^variant" | head -20
python -m lab check --variants $KO --out $OUT/check_ko.json > $OUT/check_ko.txt 2>&1; tail -4 $OUT/check_ko.txt
timeout 240 python -m lab sanitize --variants $KO --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -5 $OUT/sanitize.txt
for s in 4,16,4096,64 4,16,4096,64,causal 16,16,1024,64 8,16,2048,64 32,16,512,64 64,16,256,64 32,8,512,64 4,71,2048,64,causal,kv1,bf16 4,12,2048,64,causal,bf16 4,16,512,64 2,16,8192,64; do
  python -m lab bench --variants wide_kv_tiles_long_d64,three_ctas_d64 --shape $s --cap 0.5 2>&1 | grep -E "^\(|wide_kv|three_ctas|sdpa_cudnn" ; done > $OUT/bench.txt 2>&1
cat $OUT/bench.txt
