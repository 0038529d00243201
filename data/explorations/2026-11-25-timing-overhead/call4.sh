#!/bin/bash
# One H100 call: which implementation's blocks keep the hold waiting (which_blocks.py), and the
# import wall time of torch's compiler stack with and without a bytecode cache prefix.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
IMP="import torch, torch._dynamo, torch._inductor.compile_fx, torch.nn.attention.flex_attention"
for i in 1 2; do s=$(date +%s.%N); python -c "$IMP"; echo "plain import $i: $(echo "$(date +%s.%N) - $s" | bc) s"; done | tee $OUT/pycache.txt
for i in 1 2 3; do s=$(date +%s.%N); PYTHONPYCACHEPREFIX=/tmp/pyc PYTHONDONTWRITEBYTECODE= python -c "$IMP"; echo "prefix import $i: $(echo "$(date +%s.%N) - $s" | bc) s"; done | tee -a $OUT/pycache.txt
python -m lab build > /dev/null 2>&1; echo "build rc=$? at $((SECONDS-T0)) s"
timeout 300 python data/explorations/2026-11-25-timing-overhead/which_blocks.py $OUT 2>&1 | grep -v "^build\|^  " | tee $OUT/which_blocks.txt | grep -i "timed out\|error" ; echo "which rc=$? at $((SECONDS-T0)) s"
grep -c . $OUT/which_blocks.txt; head -3 $OUT/which_blocks.txt
