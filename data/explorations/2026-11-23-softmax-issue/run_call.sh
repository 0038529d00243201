# Device call of the softmax-issue exploration: build the configurations in parallel, check and
# time them (log.txt; V = configurations, SHAPES = timed shapes), count SASS instructions, profile two shapes with ncu; summary printed last.
source .whl/prelude.sh && export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-23-softmax-issue/explore_softmax.py
D64=data/explorations/2026-11-23-d64-tiles/explore_d64_tiles.py
P=FA_EXP2_POLY
V=${V:-"model_inputs,model_inputs:FA_SOFTMAX_CHAINS=4,model_inputs:FA_SOFTMAX_CHAINS=4+${P}_MOD=4+${P}_REM=1,model_inputs:FA_SOFTMAX_CHAINS=4+${P}_MOD=8+${P}_REM=3,model_inputs:FA_SOFTMAX_CHAINS=4+${P}_MOD=2+${P}_REM=1,model_inputs:${P}_MOD=4+${P}_REM=1"}
export VARIANTS=$V
t0=$(date +%s)
# build the configurations in parallel (cached by key for the runs below)
for s in ${V//,/ }; do python -c "
import importlib.util,sys
sp=importlib.util.spec_from_file_location('d',sys.argv[1]); m=importlib.util.module_from_spec(sp); sp.loader.exec_module(m); m.library(sys.argv[2])" $D64 "$s" > $OUT/build_$(echo $s | md5sum | cut -c1-6).txt 2>&1 & done; wait
cat $OUT/build_*.txt | grep -v Warn | head -20; echo "built in $(( $(date +%s) - t0 )) s"
for so in $(find build/kernels -name '*.so'); do echo "$so MUFU.EX2=$(cuobjdump -sass $so 2>/dev/null | grep -c MUFU.EX2) FMNMX=$(cuobjdump -sass $so 2>/dev/null | grep -c FMNMX) FADD=$(cuobjdump -sass $so 2>/dev/null | grep -c 'FADD')"; done > $OUT/sass_counts.txt; cat $OUT/build_*.txt | grep regs > $OUT/builds.txt; rm $OUT/build_*.txt
SHAPES=${SHAPES:-"4,16,16,512,64,fp16;8,16,16,512,64,fp16;4,16,16,4096,64,fp16;4,16,16,4096,64,fp16,c;4,71,1,2048,64,bf16,c;4,16,16,4096,128,fp16;16,16,16,1024,128,fp16"}
OUT=$OUT CAP=1.0 python $X "$SHAPES" > $OUT/log.txt 2>&1
echo "check+bench done at $(( $(date +%s) - t0 )) s"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__inst_executed.sum
for sh in 4,16,16,4096,64,fp16 4,16,16,4096,128,fp16; do
 NCU_SHAPE=$sh ncu --clock-control none --csv --page raw --metrics $M -k regex:"attention|cudnn" python $X > $OUT/ncu_${sh//,/_}.csv 2>>$OUT/log.txt
done
echo "ncu done at $(( $(date +%s) - t0 )) s"
python - $OUT <<'PY'
import csv, glob, sys
for path in sorted(glob.glob(sys.argv[1] + "/ncu_*.csv")):
    rows = [r for r in csv.reader(open(path)) if r]
    try: hdr = next(i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r)
    except StopIteration: print(path, "no data"); continue
    h = rows[hdr]
    for r in rows[hdr + 2:]:
        g = dict(zip(h, r)); f = lambda k: g.get(k, "?")
        print(path.split("/")[-1][4:-4], f("Kernel Name")[:30],
              "dur", f("gpu__time_duration.sum"), "tensor", f("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
              "xu", f("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"), "fma", f("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
              "alu", f("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active"), "issue", f("sm__inst_issued.avg.pct_of_peak_sustained_active"),
              "wait", f("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"), "bar", f("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"),
              "lsb", f("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"), "math", f("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio"),
              "ssb", f("smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"), "disp", f("smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"), "inst", f("smsp__inst_executed.sum"))
PY
cat $OUT/sass_counts.txt
tar -C $OUT -czf $OUT/ncu.tgz $(cd $OUT && ls ncu_*.csv sass_counts.txt) && (cd $OUT && rm ncu_*.csv sass_counts.txt)
grep -E "^correctness|FAIL" $OUT/log.txt; sed -n '/SUMMARY/,$p' $OUT/log.txt
