"""Issue 50's target 4 (the decode set adds at most 60 s to a run on an H100): the decode part of a run
(lab.studies.decode_study.run: build, checks, timing, profile) as a run at the defaults does it, in one of two
configurations, its records under OUT/<label>:

- old: as run 20261205T192124Z-f585548 took it (65.9 s on an H100): hot samples of about 1 ms (HotTimer's default),
  hot turns of at most 2 ms, one ncu process a profiled shape;
- new: this tree's defaults: hot samples of about 0.5 ms (measure_decode.DECODE_HOT_SAMPLE_US), hot turns of at most
  1 ms (decode_study.DECODE_HOT_TURN_US), both profiled shapes in one ncu process (profile_decode_shapes).

    python stage.py old|new OUT
"""
import json
import sys
import time
from pathlib import Path

from lab.measure import records
from lab.measure.decode_profile import profile_decode
from lab.studies import decode_study
from lab.studies.measure_decode import measure_decode_shape
from lab.studies.params import RunParams

label, out = sys.argv[1], Path(sys.argv[2])
kwargs = {}
if label == "old":
    decode_study.DECODE_HOT_TURN_US = 2000
    kwargs["measure"] = lambda *a, **k: measure_decode_shape(*a, **k, hot_sample_us=1000.0)
    kwargs["profile"] = lambda calls, out_dir, gpu=None: [r for spec, names in calls
                                                          for r in profile_decode(names, spec, out_dir, gpu=gpu)]
elif label != "new":
    sys.exit(f"stage.py: {label!r}: old or new")
rec = records.RunRecord(root=out / label)
params = RunParams.from_text(decode="decode").resolved()
rec.write_json("params.json", params.to_json())
t = time.perf_counter()
got = decode_study.run(rec, progress=lambda m: print(m, flush=True), **kwargs)
print(f"{label}: decode stage {time.perf_counter() - t:.1f} s; seconds {json.dumps(got['seconds'])}", flush=True)
