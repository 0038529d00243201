# One device call: call1.sh (its files bundled as $OUT/call1.tgz), then, only if every GPU test passed and the
# sanitizer found nothing, the landing of step 69 started at once on the same machine (poll.sh with FRESH=1, CHECKED
# naming this folder, the sustained mode at the shapes issue 46 judges), waiting for it until the call's 600 s are near.
# From the root of the landing commit's tree; carry [".whl", ".fa3", ".scratch"] (.scratch/sha_run names the commit).
D=data/checks/2026-12-05-step68-69-draft
S0=$(date +%s) REAL=$OUT
export OUT=/tmp/call1 && mkdir -p $OUT
bash $D/call1.sh 2>&1 | tee $OUT/log.txt | tail -30
tar czf $REAL/call1.tgz -C /tmp call1
export OUT=$REAL
tests_ok=0; tail -1 /tmp/call1/gpu_tests.txt | grep -qE "^=*\s*[0-9]+ passed[^,]*(, [0-9]+ (skipped|deselected|warnings?))*( in |$)" && tests_ok=1
san_ok=0; grep -q "sanitize rc=0" /tmp/call1/log.txt && san_ok=1
echo "tests_ok=$tests_ok san_ok=$san_ok after $(( $(date +%s)-S0 )) s"
if [ $tests_ok = 1 ] && [ $san_ok = 1 ]; then
  CHECKED=$D FRESH=1 STEP=counter_tile_from_2k_d64 RUN_ARGS="--sustained large,long,models" \
    WAIT=$(( 575 - ($(date +%s)-S0) )) bash lab/studies/landing/poll.sh
  tail -5 $OUT/status 2>/dev/null
fi
