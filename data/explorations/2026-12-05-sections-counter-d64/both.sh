# call1.sh then call2.sh in one device call (about 450 s of command time with the builds; a device call may run 600),
# so that no idle release between them costs a machine's start. Each call's files are bundled (a call brings back
# at most 8): $OUT/call1.tgz and $OUT/call2.tgz, unpacked into this folder's call1/ and call2/. carry [".whl", ".fa3"].
E=data/explorations/2026-12-05-sections-counter-d64
REAL=$OUT
for c in call1:380 call2:200; do  # seconds each may take, 580 in all
  limit=${c#*:} c=${c%:*}
  export OUT=/tmp/$c && mkdir -p $OUT
  timeout $limit bash $E/$c.sh 2>&1 | tee $OUT/log.txt | tail -40
  tar czf $REAL/$c.tgz -C /tmp $c
done
