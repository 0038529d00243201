#!/bin/bash
# Where does a bench's wall time go? (issue 21, target 5: the timing stage's cost)
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
timeout 60 python -m lab build > $OUT/build.txt 2>&1
timeout 200 python -m cProfile -o $OUT/bench.prof -m lab bench --shape 4,16,512,64 --cap 1.0 > $OUT/bench.txt 2>&1
