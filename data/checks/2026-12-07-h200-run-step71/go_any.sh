#!/bin/bash
# One device call for whichever GPU comes (a call naming nvidia-h200 often gets an H100: sessions 113 and 114 lost
# most of their device time to starts that found no machine or the wrong one). An H200 runs go_companion.sh (issue 46's
# sustained companion, TURNS turns, 6 by default; WAIT, the first call's wait, 560 s by default); poll it as
# go_companion.sh's header says. An H100 runs issue 50's call for step 73 and the round levels instead
# (../../explorations/2026-12-07-longest-first-deal/call1.sh, about 10 minutes), since session 115; before, it did
# nothing (sessions 113-114 ran issue 50's copy-reference and mixed-phases calls on H100s from here).
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
if echo "$name" | grep -q H200; then bash data/checks/2026-12-07-h200-run-step71/go_companion.sh
else bash data/explorations/2026-12-07-longest-first-deal/call1.sh; fi
