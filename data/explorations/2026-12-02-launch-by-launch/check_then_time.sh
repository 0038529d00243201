# Sourced by call4.sh (calls 2 and 3 ran the same lines inline): the configurations of EXP_CONFIGS on the correctness
# grid, their outputs against the first one's at EXP_SHAPES (same_out.py), and only if both pass, hot paired timing
# until TIME_END seconds after T0 (call 5 on: a configuration that does not build stops it too). Needs X, E, OUT, T0 and TIME_END; returns non-zero where a check failed.
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -12
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; return 1; }
grep -q "BUILD FAILED" $OUT/check.txt && { echo "a configuration did not build: no timing"; return 1; }
timeout 60 python $E/same_out.py > $OUT/same_out.txt 2>&1; echo "same_out rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/same_out.txt | cut -c1-160
grep -q "every output equal" $OUT/same_out.txt || { echo "outputs differ: no timing"; return 1; }
timeout $(( TIME_END - ($(date +%s)-T0) )) python $X/exp.py time 1.2 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-250 $OUT/time.txt | grep -v built
