#!/bin/bash
# One H100 call: hot latency with events on the stream (as the runs took it) against events captured
# inside the graph, per implementation and shape (graph_events.py).
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
python -c "import torch; print(torch.__version__, torch.version.cuda)"
timeout 400 python data/explorations/2026-11-25-timing-overhead/graph_events.py $OUT 2>&1 | grep -v "^build\|^  \|^building" | tee $OUT/graph_events.txt
