"""Step 63's SASS checks on the CPU machine (no GPU), with step63-landing.patch applied (the draft's step63.patch in
its first run, git show 639a0d5):
1. step 63 (its file) against step 62 (its file), kernel by kernel: which kernels change (none is expected to: the
   step is its launch rule and the counter's count, host code; the draft before call 2 changed the static
   three-warpgroup tile's, compiled without causal paths), and spills;
2. the twin at its defaults against step 63, every kernel (tests/test_knockouts.py asserts it too);
3. the twin with FA_COUNTER_TILE_CAUSAL_D64=0 against step 62: the knock-out's kernels are step 62's;
4. earlier steps that include the two edited headers (tile_size.cuh, tile_queue.cuh) against their SASS at the
   commit before the patch (BASE_SASS_DIR, written by running this with --base on the unpatched tree).

    PYTHONPATH=. python sass_checks.py --base /tmp/base_sass   # unpatched tree
    git apply step63-landing.patch && PYTHONPATH=. python sass_checks.py /tmp/base_sass

A later host-only step (step 65 on) runs the same checks with its names: STEP, PARENT, SWITCH (its knock-out's
define) and EARLIER (comma-separated) in the environment, e.g. STEP=fa3_sections_causal_d128
PARENT=mirrored_second_tile SWITCH=FA_FA3_SECTIONS_CAUSAL_D128 EARLIER=... python sass_checks.py /tmp/base_sass.
"""
import os
import re
import sys
from pathlib import Path

from lab.kernels import switches as sw

EARLIER = (os.environ["EARLIER"].split(",") if os.environ.get("EARLIER") else
           ["longest_first_queue", "three_wgs_causal_d64", "three_wgs_queue_causal_d64", "queue_overlap_d64",
            "rescale_under_s"])
STEP, PARENT = os.environ.get("STEP", "counter_tile_causal_d64"), os.environ.get("PARENT", "rescale_under_s")
SWITCH = os.environ.get("SWITCH", "FA_COUNTER_TILE_CAUSAL_D64")


def kernels(text):
    return sw.sass_by_kernel(text)


def short(name):
    m = re.search(r"attention_fwdI(\w+?)Li(\d+)ELN2fa14HopperTileKindE(\d)ELb(\d)ELb(\d)", name)
    return f"{'bf16' if 'bfloat' in m.group(1) else 'fp16'} D={m.group(2)} kind {m.group(3)} queue {m.group(4)} one-loop {m.group(5)}" if m else name[:60]


def compare(label, a, b):
    ka, kb = kernels(a), kernels(b)
    changed = sorted(short(n) for n in ka if n in kb and ka[n].strip() != kb[n].strip())  # a dump's last kernel ends in a blank line
    only_a = sorted(short(n) for n in ka if n not in kb)
    only_b = sorted(short(n) for n in kb if n not in ka)
    print(f"{label}: {len(ka)} / {len(kb)} kernels, {len(changed)} differ" +
          (f": {changed}" if changed else "") + (f"; only in the first: {only_a}" if only_a else "") +
          (f"; only in the second: {only_b}" if only_b else ""))
    return changed, only_a, only_b


def spills(text):
    return sum(1 for line in text.splitlines() if re.search(r"\b(STL|LDL)\b", line))


if sys.argv[1] == "--base":
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name in EARLIER:
        (out / f"{name}.sass").write_text(sw.sass(name, "sm_90a", {}, twin=False))
    sys.exit(0)

base = Path(sys.argv[1])
step = sw.sass(STEP, "sm_90a", {}, twin=False)
parent = sw.sass(PARENT, "sm_90a", {}, twin=False)
twin = sw.sass(STEP, "sm_90a", {}, twin=True)
twin_off = sw.sass(STEP, "sm_90a", {SWITCH: 0}, twin=True)
print(f"local loads/stores in {STEP}'s SASS: {spills(step)} ({PARENT}'s: {spills(parent)})")
compare(f"1. {STEP} against {PARENT}", step, parent)
compare("2. the twin at its defaults against the step", twin, step)
compare(f"3. the twin, {SWITCH}=0, against {PARENT}", twin_off, parent)
for name in EARLIER:
    compare(f"4. {name} against its SASS before the patch", sw.sass(name, "sm_90a", {}, twin=False),
            (base / f"{name}.sass").read_text())
