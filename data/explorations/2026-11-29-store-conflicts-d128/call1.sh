# Shared-memory store bank conflicts at (4, 16, 4096, 128): step 49 against step 50 (the recorded run's profile:
# 719,818 -> 889,133 store conflicts, 0.805 -> 1.0002 % of wavefronts). Two ncu passes of each (is the count
# stable?), with SourceCounters so that the conflicts can be read instruction by instruction (--page source).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
$NCU --version | tail -1 > $OUT/ncu_version.txt
T0=$(date +%s)
python -m lab build --variants three_warpgroups_d64,pipeline_state_d128 > $OUT/build.txt 2>&1; echo "build rc=$? $(( $(date +%s)-T0 )) s"
M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_shared_st.sum,gpu__time_duration.sum
for rep in 1 2; do for impl in three_warpgroups_d64 pipeline_state_d128; do
  tag=${impl}_$rep
  timeout 100 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --section SourceCounters -f -o /tmp/$tag \
    python -m lab.measure.profile --target $impl --shape 4,16,4096,128 > /tmp/$tag.log 2>&1
  echo "$tag rc=$? $(( $(date +%s)-T0 )) s"
  $NCU -i /tmp/$tag.ncu-rep --page raw --csv --metrics $M > /tmp/${tag}_raw.csv 2>/dev/null
  [ $rep = 1 ] && $NCU -i /tmp/$tag.ncu-rep --page source --csv --print-source sass > /tmp/${tag}_sass.csv 2>/dev/null
  [ $(( $(date +%s)-T0 )) -gt 200 ] && break 2
done; done
cd /tmp && tar czf $OUT/conflicts.tgz *_raw.csv *_sass.csv *.log 2>/dev/null; ls -la $OUT
for f in /tmp/*_raw.csv; do echo "$f"; python3 -c "
import csv,sys
rows=list(csv.reader(open('$f')))
h=rows[0]; 
for r in rows[2:]:
  print({k:v for k,v in zip(h,r) if k.startswith(('l1tex','smsp','gpu__'))})
" | cut -c1-400; done
