"""Do the steps with a lazy rescale (24 lazy_rescale, 25 small_grid_tiles, 29 portable_model_inputs, 61
conditional_rescale) pass the grid's new rising-max cases (lab.measure.check.rising_max_cases), whose rows' max jumps
by far more than 2^8 in a later key tile, so that their rescaling path runs? Builds the four in parallel, then checks
each on the nine cases (a case a variant does not take is recorded as not taken). Prints one line a variant and case;
writes rising.json under $OUT. Written 2026-12-04 for one device call that the session's device time did not reach
(not yet run):

    source .whl/prelude.sh; PYTHONPATH=$PWD python data/explorations/2026-12-04-kv-apart-step61/rising_steps.py"""
import json
import os
from concurrent.futures import ThreadPoolExecutor

from lab.kernels import variants
from lab.measure import check

NAMES = ["conditional_rescale", "lazy_rescale", "small_grid_tiles", "portable_model_inputs"]
with ThreadPoolExecutor(4) as pool:
    kernels = dict(zip(NAMES, pool.map(variants.load, NAMES)))
print("built", flush=True)
results = list(check.run_grid(kernels, check.rising_max_cases()))
for r in results:
    print(r.explain(), f"err {r.max_abs_err:.4f} tol {r.tolerance:.4f}", flush=True)
print({n: sum(r.passed for r in results if r.variant == n) for n in NAMES}, "passed of",
      {n: sum(not r.unsupported for r in results if r.variant == n) for n in NAMES}, "taken")
with open(os.path.join(os.environ.get("OUT", "."), "rising.json"), "w") as fh:
    json.dump(check.as_records(results), fh, indent=1)
