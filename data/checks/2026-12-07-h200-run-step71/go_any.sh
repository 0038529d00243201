#!/bin/bash
# One device call that does something on whichever GPU comes (session 113 lost 1,260 s of its 1,800 to nine starts that
# found no machine; a call naming nvidia-h200 may also get an H100). Both GPUs first run issue 50's copy-reference call 4
# (../../explorations/2026-12-07-copy-reference/call4.sh, about a minute, its files under $OUT/copyref), before anything
# else loads the GPU (SKIP_COPY=1: on neither; an H100 then does nothing, the copy's calls 1-4 having run). An H200 then starts go_companion.sh (issue 46's sustained companion, TURNS turns, 6 by default)
# with a first wait short enough for the call's 600 s; poll it as go_companion.sh's header says. An H100 stops there
# (issue 50's mixed-call exploration already ran on one: ../../explorations/2026-12-07-decode-mixed-phases-h200).
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
if [ -z "$SKIP_COPY" ]; then
  mkdir -p "$OUT/copyref" && OUT=$OUT/copyref bash data/explorations/2026-12-07-copy-reference/call4.sh
fi
if echo "$name" | grep -q H200; then WAIT=${WAIT:-330} bash data/checks/2026-12-07-h200-run-step71/go_companion.sh; fi
