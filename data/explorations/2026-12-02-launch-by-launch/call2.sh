# Issue 46, call 2: the causal D = 128 launches' idle tail (call 1: step 53's SMs idle 4.7-4.9 % of the elapsed
# cycles at (1, 16, 16384, 128, causal) and (2, 16, 8192, 128, causal), FA3's 2.0-2.3 %; the SMs' active cycles min
# / max 0.874 against 0.98). Why: those launches walk step 27's static list of heavy-light pairs, 1024 pairs of
# equal weight over 132 CTAs (7.76 a CTA: 8 / 7 = the 0.875 spread), because the counter's L2 sections leave a last
# section of 1-2 heads (128 tiles, under kQueueTilesPerCta x 132 = 528) and the launch then keeps the static list
# (queue_cover.txt). FA3 sections 32 MB of K/V (4 heads of 8 MB: 4 even sections, 512 tiles in the last).
# queue_sections.patch (on the device copy only) adds three exploration macros to fa/tile_queue.cuh; configurations:
#   s53: as committed;
#   f3:  sections of three fifths of the L2 (36 MB: 4, 8, 16 heads) and the counter from 3 tiles a CTA;
#   mt:  sections as now, the remainder merged into the last full section (4, 8, 20 heads), from 3 tiles a CTA.
# queue_cover.txt (host only, nvcc here): both give every (tile, head) once, the counter at the four causal D = 128
# canonical shapes, and leave the grouped models rows' sections as they are (mt) or one section (f3).
# Predictions, written before the call (hot, paired rounds, over s53): f3 and mt 1.02x-1.035x at (1, 16, 16384,
# 128, causal), (2, 16, 8192, 128, causal) and (4, 16, 4096, 128, causal) (the idle share from about 4.8 % to about
# 2 %, the loop unchanged); 1.00x-1.03x at (16, 16, 1024, 128, causal); 0.99x-1.01x at (1, 16, 16384, 128) (equal
# tiles: the counter cannot balance 15.5 tiles a CTA better) and, for mt, at the grouped models rows (unchanged
# launches); f3 at the models rows (one section of 32 MB) 0.98x-1.01x. Outputs bit-equal to s53's at every shape.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/queue_sections.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}],
  "f3": ["two_stages_three_wgs_d64", {"FA_EXP_QUEUE_L2_FIFTHS": 3, "FA_EXP_QUEUE_TILES_PER_CTA": 3}],
  "mt": ["two_stages_three_wgs_d64", {"FA_EXP_QUEUE_MERGE_TAIL": 1, "FA_EXP_QUEUE_TILES_PER_CTA": 3}]}'
export EXP_SHAPES='["1,16,16384,128,causal", "2,16,8192,128,causal", "4,16,4096,128,causal", "16,16,1024,128,causal",
  "1,16,16384,128", "1,32,8192,128,causal,kv8,bf16", "1,64,8192,128,causal,kv8,bf16", "1,28,8192,128,causal,kv4,bf16",
  "4,32,2048,128,causal,kv8,bf16"]'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -12
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
timeout 60 python $E/same_out.py > $OUT/same_out.txt 2>&1; echo "same_out rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/same_out.txt | cut -c1-160
grep -q "every output equal" $OUT/same_out.txt || { echo "outputs differ: no timing"; exit 1; }
timeout $(( 420 - ($(date +%s)-T0) )) python $X/exp.py time 1.2 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-330 $OUT/time.txt | grep -v built
# The mechanism: the SMs' idle share of one launch each, s53 and mt, at (1, 16, 16384, 128, causal) (Nsight Compute).
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,smsp__inst_executed.sum
for c in s53 mt; do
  [ $(( $(date +%s)-T0 )) -lt 470 ] && timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M \
    --csv --page raw --print-units base python data/explorations/2026-11-29-q-double-buffer/prof_one.py $c \
    1,16,16384,128,causal > $OUT/ncu_${c}_1_16_16384_128_causal.csv 2>&1
  echo "ncu $c rc=$? $(( $(date +%s)-T0 )) s"; done
python - $OUT/ncu_*_causal.csv <<'PY'
import csv, sys
for p in sys.argv[1:]:
    rows, h = [], None
    for f in csv.reader(l for l in open(p) if l.startswith('"')):
        if f and f[0] == "ID": h = f
        elif h and len(f) == len(h) and f[0].strip().isdigit(): rows.append(dict(zip(h, f)))
    for r in rows:
        n = lambda m: float(r[m].replace(",", ""))
        print(p.split("/")[-1], f"{n('gpu__time_duration.sum') / 1e3:.1f} us, SMs idle "
              f"{1 - n('sm__cycles_active.avg') / n('sm__cycles_elapsed.max'):.4f}, active min / max "
              f"{n('sm__cycles_active.min') / n('sm__cycles_active.max'):.4f}, instructions {n('smsp__inst_executed.sum'):.4g}")
PY
