#!/usr/bin/env bash
# Device call 2 (H200): the FA3 GPU tests again (call 1's grid test had a wrong attribute), and
# sustained_probe.py: how long back-to-back launches take to settle at the loaded clocks, per
# implementation, and what an interleave of 200 ms blocks gives.
set -uo pipefail
source .whl/prelude.sh
export LAB_GIT_SHA=$(cat .scratch/sha) LAB_GIT_DIRTY=0 PYTHONPATH=.:${PYTHONPATH:-}
T0=$SECONDS
python -m lab.measure.fa3 2>&1 | tail -2
python -m pytest -q -m gpu tests/test_fa3_peer.py -p no:cacheprovider 2>&1 | tail -3 | tee $OUT/gpu_tests.txt
timeout 420 python data/explorations/2026-11-27-fa3-peer/sustained_probe.py $OUT 2>&1 | grep -v Warning | tee $OUT/sustained_probe.txt
gzip -f $OUT/sustained_probe.json
echo "done at $((SECONDS-T0)) s"
