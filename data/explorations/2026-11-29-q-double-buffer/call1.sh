# Call 1 (issue 46): why step 49's three-warpgroup tile loses at causal D = 64 where its static pairs leave the last
# round part empty, and whether a second Q buffer helps. q_buffers.patch (on step 51's twin, applied here only):
# FA_EXP_Q_BUFFERS = 2 gives the three-warpgroup tile two Q buffers (work tile r's Q in buffer r % 2, the second after
# the K/V stages, 144 KB in all), so the next tile's Q loads while the warpgroup with the most keys still reads the
# last one, and the warpgroups that finish a causal tile early (warpgroup 0 sees 1-2 key tiles fewer at the
# diagonal) start the next one as far as the K/V ring lets them; FA_EXP_THREE_WGS_COUNTER = 1 hands the tile's
# work out by the counter; FA_EXP_THREE_WGS_PRODUCER_REGS = 24 gives a consumer 160 registers (at 152 the two-buffer
# kernel spills 8 B, so st24 is its control). FA_TILE_THREE_WGS_CAUSAL_FILL_D64 = 0 sends every causal call of
# S >= 4096 to the tile. Predicted before the call: st24 -> stq2 1.02x-1.06x at the causal shapes, 0.99x-1.01x
# non-causal (no warpgroup finishes early there). Then Nsight Compute's per-SM active cycles (min / mean / max:
# the launch's tail) and tensor-pipe share at (4, 16, 4096, 64, causal) for st24, stq2, qc24, qcq2 and FA3.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-11-29-q-double-buffer
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
git apply $E/q_buffers.patch || exit 1
F='"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 0'
export EXP_CONFIGS='{"st24": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 24}],
  "s51": ["three_wgs_causal_d64", {}],
  "st": ["three_wgs_causal_d64", {'"$F"'}],
  "stq2": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_Q_BUFFERS": 2}],
  "qc24": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_THREE_WGS_COUNTER": 1}],
  "qcq2": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_THREE_WGS_COUNTER": 1, "FA_EXP_Q_BUFFERS": 2}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "1,16,16384,64,causal", "2,32,4096,64,causal", "8,16,4096,64,causal",
  "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "4,16,4096,64", "1,16,16384,64"]'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-160 | tail -14
grep -q "failed; " $OUT/check.txt && ! grep -qE "[1-9][0-9]* failed" $OUT/check.txt || { echo "a check failed: no timing"; exit 1; }
timeout $(( 250 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.max.pct_of_peak_sustained_elapsed
for c in st24 stq2 qc24 qcq2 fa3; do
  [ $(( $(date +%s)-T0 )) -gt 370 ] && break
  if [ $c = fa3 ]; then cmd="python -m lab.measure.profile --target flash_attn3 --shape 4,16,4096,64,causal"
  else cmd="python $E/prof_one.py $c 4,16,4096,64,causal"; fi
  timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base $cmd > $OUT/ncu_$c.csv 2>&1
  echo "ncu $c rc=$? $(( $(date +%s)-T0 )) s"
done
cut -c1-460 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
python - <<'PY'
import csv, glob, io, os
for f in sorted(glob.glob(os.environ["OUT"] + "/ncu_*.csv")):
    rows = [r for r in csv.reader(io.StringIO("".join(l for l in open(f) if l.startswith('"')))) if len(r) > 5]
    if not rows: print(os.path.basename(f), "no rows"); continue
    h = rows[0]; i_n, i_v = h.index("Metric Name"), h.index("Metric Value"); i_k = h.index("Kernel Name")
    for r in rows[1:]:
        if "attention" in r[i_k].lower() or "flash" in r[i_k].lower():
            pass
    vals = {}
    for r in rows[1:]:
        vals.setdefault(r[i_k][:40], {})[r[i_n]] = r[i_v]
    for k, v in vals.items():
        a, mn, mx = (float(v.get(f"sm__cycles_active.{x}", "nan").replace(",", "")) for x in ("avg", "min", "max"))
        print(f"{os.path.basename(f):14s} {k:40s} t={v.get('gpu__time_duration.sum')} active avg/max {a / mx:.3f} min/max {mn / mx:.3f}"
              f" elapsed {v.get('sm__cycles_elapsed.max')} gmma avg {v.get('sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed')}"
              f" max {v.get('sm__pipe_tensor_op_gmma_cycles_active.max.pct_of_peak_sustained_elapsed')} inst {v.get('smsp__inst_executed.sum')}")
PY
