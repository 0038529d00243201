source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
pip list 2>/dev/null | grep -i -E "^pytest |hypothesis" ; python -c "import pytest" || echo NO_PYTEST
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['wide_kv_tiles_long_d64']+[k.impl for k in sw.knockouts('wide_kv_tiles_long_d64', sw.load()[0])]))")
timeout 250 python -m lab sanitize --variants $KO --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -5 $OUT/sanitize.txt
python -c "
import json; r=json.load(open('$OUT/sanitize.json')); print(len(r), 'runs,', sum(v['clean'] for v in r.values()), 'clean')" 2>&1 | tail -2
timeout 300 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -x -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; echo "pytest rc=$?"; tail -4 $OUT/gpu_tests.txt
