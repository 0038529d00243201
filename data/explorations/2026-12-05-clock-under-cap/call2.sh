# Call 2 of data/explorations/2026-12-05-clock-under-cap, from the repository root on one GPU (about 500 s with the
# build). Before it: `git rev-parse HEAD > .scratch/sha_run` (the runs record it: the lent tree has no .git), and move
# data/checks and data/runs aside so that the tree fits in 64 MiB; carry [".whl", ".fa3", ".scratch/sha_run"].
# Falcon-7B's (4, 71, 2048, 64, causal, kv1) read 0.941x FA3 in the landing's sustained turns (three boards, 0.916 to
# 0.950 by replicate) and 0.991x in call 1's cap.py (another board). The protocols differ in three ways: the lab times
# CUDA-graph replays of about 5 ms and rotates four rows (step 67, its parent, FA3, cuDNN) with a 150 ms settle a turn;
# cap.py times plain launches of two rows in ABBA blocks. This call runs both on one board, twice the lab's:
#   1. the lab's sustained mode at call 1's four shapes (3 replicates, the landing's rows: FA3 and cuDNN as peers);
#   2. cap.py with plain launches; 3. cap.py with GRAPH=1 (the lab's graph replays, two rows);
#   4. the lab's sustained mode again (the board warmer: the order's effect).
# Predictions, written before the call:
#  - the board does not explain it: 1 and 4 read Falcon-7B at 0.92-0.96, as the three boards of the landing did;
#  - 2 reads 0.98-1.01 again, as call 1; so the protocol does;
#  - 3 splits the protocol: graph replays alone 0.98-1.01 (the graphs are not it), which leaves the rotation of four
#    rows and the settle. Less likely: 3 at 0.92-0.96 (the graphs are it).
#  - The other three shapes read within 0.015 of call 1 in all four.
#  - The lab runs record each sustained turn's mean clock (sm_clock_mean_mhz, from 309a6e4 on: a thread reads NVML
#    while the turn waits on its last event, which releases the GIL): every sustained sample has one, and its medians by
#    row lie within 2 % of cap.py's mean clocks at the same shape. rounds.py reads them.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha_run)
E=data/explorations/2026-12-05-clock-under-cap
S='4,71,2048,64,causal,kv1,bf16;4,16,4096,64,causal;4,12,2048,64,causal,bf16;4,16,4096,128,causal'
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
lab_run() {
  python -m lab.pipeline --no-report --variants uniform_row0_d128 --shapes "$S" --modes sustained --sustained "$S" \
    --peers flash_attn3,sdpa_cudnn --check quick --profile 0 --knockouts 0 --decode= --replicates 3 >> $OUT/log.txt 2>&1
  echo "lab run rc=$? $(( $(date +%s)-T0 )) s" | tee -a $OUT/log.txt
}
lab_run
python $E/cap.py uniform_row0_d128 flash_attn3 ${S//;/ } > $OUT/cap2.txt 2>&1; echo "cap rc=$? $(( $(date +%s)-T0 )) s"
GRAPH=1 python $E/cap.py uniform_row0_d128 flash_attn3 ${S//;/ } > $OUT/cap2_graph.txt 2>&1
echo "cap graph rc=$? $(( $(date +%s)-T0 )) s"
lab_run
tar czf $OUT/runs.tgz data/runs
tail -7 $OUT/cap2.txt; tail -7 $OUT/cap2_graph.txt
for r in data/runs/*/; do python $E/rounds.py $OUT/blocks.csv "${r%/}" | tail -5; done
python - <<'PY'
import glob, pandas as pd
for f in sorted(glob.glob("data/runs/*/samples.parquet")):
    s = pd.read_parquet(f)
    s = s[s["mode"] == "sustained"]
    col = s.get("sm_clock_mean_mhz")
    print(f, "sustained samples", len(s), "with a turn's mean clock", 0 if col is None else int(col.notna().sum()))
PY
