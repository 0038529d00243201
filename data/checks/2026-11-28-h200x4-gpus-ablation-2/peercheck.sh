#!/bin/bash
# How long check_peers' work takes in a fresh process with cold inductor/Triton caches, then again warm.
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d)
nproc
for pass in cold warm; do
python - $pass <<'PY'
import sys, time
t0 = time.time()
from lab.measure import peers, check
found, _ = peers.resolve(peers.default_names())
ps = [p for p in found if not p.name.startswith("sdpa_")]
print(sys.argv[1], "import+resolve", round(time.time() - t0, 1), [p.name for p in ps], flush=True)
for p in ps:
    t = time.time()
    r = list(check.run_grid({p.name: check.peer_as_attn(p)}, check.peer_grid()))
    print(sys.argv[1], p.name, len(r), sum(x.passed for x in r), "cases", round(time.time() - t, 1), "s", flush=True)
print(sys.argv[1], "total", round(time.time() - t0, 1), flush=True)
PY
done
