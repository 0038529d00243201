# Issue 50, target 1's last miss: Qwen2.5-7B's mixed batch (32, 28, 4, 128, 4096) reads 0.904 of the copy hot in run
# 20261202T034853Z-3c32b09, where Llama-3-8B's and -70B's mixed batches read 1.00 and 1.03. Its 128 (sequence, K/V
# head) pairs take step 54's count over one CTA an SM, counted on the cache's capacity; a mixed batch's short
# sequences leave their later chunks' CTAs idle, so fewer CTAs work than the count assumed. Were the lengths known
# where the count is chosen (the host, at plan time, as FlashInfer's plan has them), how much faster could the call
# be? This forces the count (../2026-12-02-decode-row-block-chunks/force.patch's FA_DECODE_FORCE_SPLITS, on the
# device copy only) on step 57 (tensor_maps_prefetched, the decode branch's end in the tree) and times each count
# against the rule's (sweep.py: each configuration checked on the decode grid first; hot and cold). About 150 s.
# Predictions, written before the call: step 57 takes 2 chunks at the Qwen shapes. At the mixed Qwen batch, 3 or 4
# chunks the fastest, 1.05x-1.12x over the rule's 2 (enough for 0.95 of the copy); at its uniform twin, 2 chunks the
# fastest or within 2 % of it; at Llama-3-8B's mixed batch (256 pairs: no split), no count more than 1.03x faster
# than the rule's 1 chunk; at (8, 32, 8, 128, 8192) the rule's count within 2 % of the fastest.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply data/explorations/2026-12-02-decode-row-block-chunks/force.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S=tensor_maps_prefetched
C="s57=$S"
for n in 1 2 3 4 6 8; do C="$C f$n=$S@FA_DECODE_FORCE_SPLITS=$n"; done
T0=$(date +%s)
SWEEP_MODES=hot,cold timeout 300 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT $C -- \
  32,28,4,128,4096,mixed,bf16 32,28,4,128,4096,bf16 32,32,8,128,4096,mixed,bf16 8,32,8,128,8192,bf16 \
  > $OUT/sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
python data/explorations/2026-12-02-decode-splits/table.py $OUT/sweep.json s57 > $OUT/table.txt 2>&1
grep -E "^check|Error|Traceback" $OUT/sweep.txt | tail -12
cut -c1-330 $OUT/table.txt
