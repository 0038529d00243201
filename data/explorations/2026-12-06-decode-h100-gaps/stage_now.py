"""Call 3 (issue 50, target 4): the decode part of a run (lab.studies.decode_study.run at the defaults of
`make ablation`: CHECK=full, PROFILE=1, hot and cold) on this tree, whose profile leaves flex_attention out
(decode_study.UNPROFILED_PEERS), records under OUT/<label>; prints decode.json's `seconds`.

    PYTHONPATH=. python stage_now.py LABEL OUT
"""
import json
import sys
import time
from pathlib import Path

from lab.measure import records
from lab.studies import decode_study
from lab.studies.params import RunParams

label, out = sys.argv[1], Path(sys.argv[2])
rec = records.RunRecord(root=out / label)
params = RunParams.from_text(decode="decode").resolved()
rec.write_json("params.json", params.to_json())
t = time.perf_counter()
got = decode_study.run(rec, progress=lambda m: print(m, flush=True))
print(f"{label}: decode stage {time.perf_counter() - t:.1f} s; seconds {json.dumps(got['seconds'])}", flush=True)
