# Step 60's GPU checks before it lands (2026-12-02): step60.patch (applied here where the tree lacks it), then the
# step's GPU tests (it and its knock-outs), compute-sanitizer (memcheck, racecheck, synccheck) on it, step 60 against
# step 59, hot, paired rounds, and Nsight Compute, one launch each, at two causal S = 512 shapes.
# Which calls take the short D = 64 tile (fa::run_hopper_tile, 132 SMs): D = 64, S < 4096, fewer than 1,320 64-row
# work tiles (S / 64 x B x H): (1, 8, 512), (4, 16, 512), (8, 16, 512), (4, 16, 1024), (2, 16, 2048); (32, 8, 512) takes
# the three-CTA tile, (4, 16, 4096) others.
# Predictions, written before the call (step 59's time over step 60's, the speedup):
#   read from call 11 (data/explorations/2026-12-02-launch-by-launch, ol1 at the causal calls): (8, 16, 512, 64,
#     causal) 1.03x-1.06x, (4, 16, 512, 64, causal) 1.005x-1.03x, (1, 8, 512, 64, causal) 0.998x-1.01x;
#   held out: (8, 16, 512, 64, causal, bf16) 1.02x-1.06x; (4, 16, 1024, 64, causal) 0.99x-1.04x; (2, 16, 2048, 64,
#     causal) 0.97x-1.02x (more unmasked tiles a CTA, where step 48's loop may pay);
#   unchanged (0.997x-1.003x; the same SASS): (1, 8, 512, 64), (4, 16, 512, 64), (8, 16, 512, 64), (4, 16, 4096, 64,
#     causal).
#   Nsight Compute at (4, 16, 512, 64, causal) and (8, 16, 512, 64, causal): stalls for an instruction fetch
#     (no_instruction, warps an issue; the manifest's metric) down 20-60 %; instructions executed within 5 %.
# Every GPU test and sanitizer passes. TOTAL (default 420) s bounds the whole; T_TESTS and T_SAN each stage.
C=data/checks/2026-12-02-step60-one-loop-causal-short-d64-draft
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply --reverse --check $C/step60.patch 2>/dev/null || git apply $C/step60.patch || { echo "patch does not apply"; exit 1; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > $OUT/gpu.txt
T0=$(date +%s)
left() { echo $(( ${TOTAL:-420} - ($(date +%s)-T0) )); }
timeout ${T_TESTS:-200} python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "one_loop_causal_short_d64" > $OUT/log_gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/log_gpu_tests.txt)"
timeout ${T_SAN:-90} python -m lab sanitize --variants one_loop_causal_short_d64 --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/log_sanitize.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/log_sanitize.txt
export EXP_CONFIGS='{"s59": ["queue_overlap_d64", {}], "s60": ["one_loop_causal_short_d64", {}]}'
export EXP_SHAPES='["8,16,512,64,causal", "4,16,512,64,causal", "1,8,512,64,causal", "8,16,512,64,causal,bf16",
  "4,16,1024,64,causal", "2,16,2048,64,causal", "1,8,512,64", "4,16,512,64", "8,16,512,64", "4,16,4096,64,causal"]'
timeout $(( $(left) - 60 )) python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.5 > $OUT/log_time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"; grep -v "^built" $OUT/log_time.txt | cut -c1-200
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_active.avg
for r in no_instruction barrier wait branch_resolving; do M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
for shape in 4,16,512,64,causal 8,16,512,64,causal; do for c in s59 s60; do
  [ $(left) -gt 15 ] && timeout 40 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --page raw \
    --print-units base python data/explorations/2026-11-29-q-double-buffer/prof_one.py $c $shape \
    > $OUT/ncu_${c}_${shape//,/_}.csv 2>&1
  echo "ncu $c $shape rc=$? $(( $(date +%s)-T0 )) s"; done; done
python - $OUT/ncu_*.csv <<'PY'
import csv, sys
for path in sys.argv[1:]:
    header = None
    for f in csv.reader(l for l in open(path) if l.startswith('"')):
        if f and f[0] == "ID": header = f
        elif header and len(f) == len(header) and f[0].strip().isdigit():
            r = dict(zip(header, f))
            keep = {k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""): v
                    for k, v in r.items() if k.startswith(("gpu__time", "smsp__inst", "sm__cycles", "smsp__average"))}
            print(path.split("/")[-1], " ".join(f"{k}={v}" for k, v in keep.items()))
PY
