# device: build step 31 + its knock-outs (spills), correctness of step 30 on the full grid, bench D=64/128
source .whl/prelude.sh && export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
KOS=$(python -c "from lab.kernels import switches as s; print(','.join(s.run_configs(['tma_store_d128'])))")
el "knock-outs: $KOS"
python -m lab build --variants serial_d64,tma_store_d128,$KOS > $OUT/build.txt 2>&1; el "build rc=$?"
grep -iE "spill|tma_store_d128" $OUT/build.txt | grep -v " 0 bytes spill" | head -40
python -m lab check --variants tma_store_d128 > $OUT/check.txt 2>&1; el "check rc=$?"; tail -4 $OUT/check.txt
for s in 4,16,4096,128 4,16,4096,128,causal 16,16,1024,128 64,16,256,128 32,16,512,128 4,64,2048,128,causal,kv8,bf16 4,32,2048,128,causal,kv8,bf16 4,16,4096,64 4,16,512,64; do
  python -m lab bench --variants serial_d64,tma_store_d128,tma_store_d128~no_tma_store_d128 --shape $s --cap 0.6 2>&1 | grep -vE "absent|unsupported|not taken"
done > $OUT/bench.txt; el "bench done"
cat $OUT/bench.txt
