#!/bin/bash
# One device call for whichever GPU comes (a call naming nvidia-h200 often gets an H100: sessions 113 and 114 lost
# most of their device time to starts that found no machine or the wrong one). An H200 runs go_companion.sh (issue 46's
# sustained companion, TURNS turns, 6 by default; WAIT, the first call's wait, 560 s by default); poll it as
# go_companion.sh's header says. An H100 does nothing: issue 50's copy-reference calls 1-4 and mixed-call exploration
# have run on H100s (../../explorations/2026-12-07-copy-reference, ../../explorations/2026-12-07-decode-mixed-phases-h200),
# and go_any.sh leaves that GPU to whatever the session queues next. Session 114 ran the copy calls from here.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
if echo "$name" | grep -q H200; then bash data/checks/2026-12-07-h200-run-step71/go_companion.sh; fi
