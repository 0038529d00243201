# Device call 1 of data/explorations/2026-12-04-cold-flush-writeback (issue 50's cold rows; the cold mode of every
# run), from the repository root, carry [".fa3"] (no wheels needed). About 150 s with the machine's start.
# Step 67's run, to come, is the first with the read flush (lab.measure.timing.L2Flusher, COLD_FLUSH = "read"):
# this call checks that the read flush evicts the L2, and measures what the write flush of the runs before it cost.
# Predictions, written before the call (writeback.txt: run 20261204T174912Z-d6d98b0's cold minus hot is 10.1 us,
# the median over 204 pairs, at the decode shapes that stream from HBM):
#  - probe (half the L2 overwritten, then read): after either flush at least 1.3x its read from the L2, and the two
#    kinds' L2 reads within 10 % of each other (the same probe and reduction).
#  - a read of four L2s (251 MB): after the write flush 8-16 us longer than after the read flush; after the read
#    flush within 2 us of the read after none.
#  - decode, the end and cuDNN: at (8, 32, 8, 128, 8192), (64, 64, 8, 128, 1024) and (32, 28, 4, 128, 4096, mixed)
#    cold-write minus hot 9-13 us (as the run), cold-read minus hot -1 to 3 us; at (64, 71, 1, 64, 1024), whose
#    inputs fit the L2 (hot reads them from it), cold-read minus hot 2-4 us and cold-write within 1.5 us of
#    cold-read (an 18 MB call evicts few dirty lines).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-12-04-cold-flush-writeback
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 400 python $X/flushes.py "8,32,8,128,8192;64,64,8,128,1024;32,28,4,128,4096,mixed;64,71,1,64,1024" \
  $OUT/flushes.json > $OUT/flushes.txt 2>&1; echo "flushes rc=$? $(( $(date +%s)-T0 )) s"
cat $OUT/flushes.txt | tail -30
