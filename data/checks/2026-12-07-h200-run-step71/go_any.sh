#!/bin/bash
# One device call that does something on whichever GPU comes (session 113 lost 1,260 s of its 1,800 to nine starts that
# found no machine; a call naming nvidia-h200 may also get an H100): an H200 runs go_companion.sh (issue 46's sustained
# companion, TURNS turns, 6 by default), an H100 the mixed-call exploration of issue 50
# (../../explorations/2026-12-07-decode-mixed-phases-h200/call1.sh with GPU=H100, about 4 minutes).
# The same checks and carry as go_companion.sh; after an H200's first call, poll as its header says.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
if echo "$name" | grep -q H200; then bash data/checks/2026-12-07-h200-run-step71/go_companion.sh
else GPU=H100 bash data/explorations/2026-12-07-decode-mixed-phases-h200/call1.sh; fi
