"""sass_mix.json recomputed with the fixed kernel-name reading: the step's SASS compiled here from the tree
`before` (the run's kernels), FA3's from its library; then compared with a recorded sass_mix.json: the counts
must be the same, kernel by kernel (only the labels may differ)."""
import json, subprocess, sys
from lab.measure import fa3
from lab.studies import sass_compare
before, step, recorded, out = sys.argv[1:5]
text = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {before!r}); from lab.kernels import switches; "
                       f"sys.stdout.write(switches.sass({step!r}, 'sm_90a'))"], capture_output=True, text=True, cwd=before,
                      check=True).stdout
new = sass_compare.compare(step, text, fa3.library_path())
old = json.load(open(recorded))
key = lambda r: (r["impl"], r["head_dim"], r["instructions_per_128_keys"], json.dumps(r["per_128_keys"], sort_keys=True))
same = sorted(map(key, old["rows"])) == sorted(map(key, new["rows"]))
print(f"{step}: {len(old['rows'])} rows recorded, {len(new['rows'])} recomputed; same counts: {same}")
for o, n in zip(old["rows"], new["rows"]):
    print(f"  {o['impl']} D={o['head_dim']} {o['kernel']!r} causal={o['causal']} -> {n['kernel']!r} causal={n['causal']} "
          f"({n['instructions_per_128_keys']:.0f})")
if same:
    json.dump(new, open(out, "w"), indent=1)
