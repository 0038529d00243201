# Per-instruction warp-stall sampling (ncu SourceCounters) of step 36 and FA3 at (1, 16, 16384, 128).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
$NCU --version | tail -1 > $OUT/ncu_version.txt
python -m lab build --variants uniform_descriptors > $OUT/build.txt 2>&1 || python -c "from lab.kernels import switches; switches.build_impl('uniform_descriptors').load()" >> $OUT/build.txt 2>&1
for impl in uniform_descriptors flash_attn3; do for c in "" ",causal"; do
  tag=${impl}${c/,/_}
  timeout 150 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SourceCounters --section WarpStateStats \
    --section LaunchStats -f -o /tmp/$tag python -m lab.measure.profile --target $impl --shape 1,16,16384,128$c > /tmp/$tag.log 2>&1
  echo "$tag rc=$?"; tail -2 /tmp/$tag.log
  $NCU -i /tmp/$tag.ncu-rep --page source --csv --print-source sass > /tmp/${tag}_sass.csv 2>/tmp/${tag}_exp.err; echo "export rc=$? $(wc -l < /tmp/${tag}_sass.csv) lines"; head -c 300 /tmp/${tag}_exp.err
  $NCU -i /tmp/$tag.ncu-rep --page details --csv > /tmp/${tag}_details.csv 2>/dev/null
done; done
cd /tmp && tar czf $OUT/stalls.tgz *_sass.csv *_details.csv *.log && cp /tmp/uniform_descriptors.ncu-rep $OUT/ 2>/dev/null; ls -la $OUT
