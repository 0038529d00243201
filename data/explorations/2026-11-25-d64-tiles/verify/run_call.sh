source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['wide_kv_tiles_long_d64']+[k.impl for k in sw.knockouts('wide_kv_tiles_long_d64', sw.load()[0])]))")
echo $KO > $OUT/ko.txt
(python -m lab build; python -m lab build --variants $KO) > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; awk '$4 !~ /^0\/0/ && NF>=7' $OUT/build.txt | grep -v "^variant" | head -20
python -m lab check --out $OUT/check_all.json > $OUT/check_all.txt 2>&1; tail -4 $OUT/check_all.txt
python -m lab check --variants $KO --out $OUT/check_ko.json > $OUT/check_ko.txt 2>&1; tail -4 $OUT/check_ko.txt
for s in 4,16,4096,64 1,16,16384,64 2,16,8192,64 4,16,4096,64,causal 1,71,8192,64,causal,kv1,bf16 1,12,8192,64,causal,bf16 8,16,2048,64 4,16,4096,128; do
  python -m lab bench --variants tma_store_d128,wide_kv_tiles_long_d64 --shape $s 2>&1 | grep -E "^\(|tma_store|wide_kv|sdpa_cudnn|sdpa_flash|flex" ; done | tee $OUT/bench.txt
