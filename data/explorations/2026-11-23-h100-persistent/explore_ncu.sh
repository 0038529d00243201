#!/usr/bin/env bash
# Exploration: one Nsight Compute launch per (impl, shape), a few headline metrics, clocks untouched.
# usage: data/explorations/2026-11-23-h100-persistent/explore_ncu.sh "impl1 impl2" "B,H,S,D[,c] ..." OUTDIR
set -u
impls=$1; shapes=$2; out=$3
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,launch__grid_size,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
for impl in $impls; do for sh in $shapes; do
  c=""; [[ $sh == *,c ]] && c="--causal"; s=${sh%,c}
  $NCU --clock-control none --csv --page raw --metrics $M --nvtx --nvtx-include profile/ -k regex:'attention|fmha|flash|sdpa|cudnn' \
    python -m lab.profile --target $impl --shape $s $c > $out/ncu_${impl}_${sh//,/_}.csv 2>$out/ncu_err.txt
  python - "$out/ncu_${impl}_${sh//,/_}.csv" "$impl" "$sh" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next(i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r)
h, data = rows[hdr], rows[hdr + 2:]
for r in data[:1]:
    g = dict(zip(h, r)); f = lambda k: g.get(k, "?")
    print(f"{sys.argv[2]:<16} {sys.argv[3]:<18} {f('Kernel Name')[:40]:<40} dur={f('gpu__time_duration.sum')} clk={f('sm__cycles_elapsed.avg.per_second')} tensor={f('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active')} issue={f('sm__inst_issued.avg.pct_of_peak_sustained_active')} L2hit={f('lts__t_sector_hit_rate.pct')} grid={f('launch__grid_size')} wait={f('smsp__average_warps_issue_stalled_wait_per_issue_active.ratio')} bar={f('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio')} lsb={f('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio')} mathpipe={f('smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio')}")
PY
done; done
