"""The decode set in a run (issue 50), after the prefill timing and its factorial: every step of the decode
branch built and checked on the decode grid (with CHECK=full the branch's end also on the set's shapes whose
fp32 reference fits a check), then every shape of the run's DECODE timed with every step that passed and the
decode peers (SDPA's backends of the run) in one process (lab.studies.measure_decode), beside the GPU's copy
bandwidth measured in the same process; on several GPUs the checks and the shapes are shared out, one child
process a GPU (time_shared, lab.studies.decode_child), each shape still timed whole in one process. With
PROFILE on, Nsight Compute then profiles one call of each timed step and peer at two shapes (profile_set;
flex_attention aside, UNPROFILED_PEERS: its compile would cost the profile more than all its calls).

Writes decode.json (the shapes, builds, checks, the copy, each shape's notes and whether its cache streams from
HBM, the summary rows, the profile's records, the seconds each part took) and decode_samples.parquet (every
sample). A step that fails to build or to pass its checks is recorded and left out of the timing; a shape that
fails is recorded and the others go on. No replicates: a decode shape's row takes a fraction of a second
(DECODE_CAP_S), and the set must cost a run at most a minute (issue 50's target 4).

    >>> decode_study.run(rec)   # what stage_timing calls where the run's DECODE names shapes
"""

from __future__ import annotations

import time
from dataclasses import replace

DECODE_CAP_S = 0.25  # a (implementation, shape, mode) row's time cap: decode launches take 10 us to 1 ms
# A decode row's least samples and hot turn, at most: 396 of 400 rows of the first recorded run stopped at
# their 50th sample (the CI was met long before), and their first 20 samples' medians were within 0.5 % of
# all their samples' at 95 % of the hot rows (data/checks/2026-11-28-h200x2-gpus-ablation/decode_min_samples.txt);
# 50 samples of 4 ms hot turns were 40 of the set's 101 s (issue 50's target 4: 60 s). Hot samples of 0.5 ms in
# turns of 1 ms (two a turn, as here) took the hot loops from 14.4-14.7 s to 12.3 s on an H200 and widened the hot
# intervals' median half-width from 0.15 % to 0.22 % (data/explorations/2026-12-06-decode-set-time): not kept.
DECODE_MIN_SAMPLES = 20
DECODE_HOT_TURN_US = 2000
DECODE_MODES = ("hot", "cold")  # of the run's modes, those the decode set takes (sustained: not yet)
CHECK_MAX_CACHE_BYTES = 1_200_000_000  # a set shape is checked against its fp32 reference up to this cache
# Peers timed but left out of the decode profile, with the reason each record gives: flex_attention's
# torch.compile runs again in the profiled process (a graph a shape), 13-14 s of the profile's 25.7 s on an H100
# against 0.4 s for SDPA's three backends (data/explorations/2026-12-06-decode-h100-gaps, call 2), and issue 50's
# target 4 gives the whole set 60 s.
UNPROFILED_PEERS = {"flex_attention": "its torch.compile in the profiled process costs 13-14 s of "
                                      "the decode set's 60 s (issue 50, target 4); its timed rows stand"}


def decode_rule(p):
    """The stopping rule of a decode row: the run's, with its time cap, least samples and hot turn at most
    DECODE_CAP_S, DECODE_MIN_SAMPLES and DECODE_HOT_TURN_US (a run's smaller values are kept)."""
    rule = p.stop_rule()
    hot_turn = min(rule.hot_turn_us, DECODE_HOT_TURN_US) if rule.hot_turn_us else DECODE_HOT_TURN_US
    return replace(rule, cap_s=min(rule.cap_s, DECODE_CAP_S), min_samples=min(rule.min_samples, DECODE_MIN_SAMPLES),
                   hot_turn_us=hot_turn)


def branch_end() -> str | None:
    """The decode branch's end (the step its check cases hold to the set's shapes), None without the branch."""
    from lab.kernels import manifest

    ends = manifest.branch_ends(manifest.names(problem=manifest.DECODE))
    return ends[-1] if ends else None


def check_cases(p, steps: list[str], end: str | None) -> list[tuple[str, object, int]]:
    """(step, shape, seed index) of the decode checks: the grid for every step; with CHECK=full the
    branch's end also on each of the run's decode shapes with a cache of at most CHECK_MAX_CACHE_BYTES;
    none with CHECK=none."""
    from lab.measure.decode_check import decode_grid

    if p.check == "none":
        return []
    grid = decode_grid()
    cases = [(s, shape, i) for s in steps for i, shape in enumerate(grid)]
    if p.check == "full" and end in steps:
        cases += [(end, shape, len(grid) + i) for i, shape in enumerate(p.decode_shapes)
                  if shape.cache_bytes <= CHECK_MAX_CACHE_BYTES]
    return cases


def run(rec, progress=print, build=None, check=None, measure=None, copy=None, peers=None, l2_bytes=None,
        gpus: list[str] | None = None, command=None, profile=None) -> dict:
    """The decode part of a run, its records written as it goes (decode.json after each shape). The
    defaults build, check and measure on the GPU; the tests inject stand-ins: `build(steps) -> {step:
    (callable or None, summary dict)}`, `check(step, fn, shape, index) -> dict` (check_decode_case's),
    `measure(shape, kernels, peers, modes, rule, clocks, run_id, seed, progress)` (measure_decode_shape's),
    `copy() -> dict` (copy_bandwidth's), `peers`: the decode peers, `l2_bytes`: the GPU's L2, `gpus`: the
    CUDA_VISIBLE_DEVICES entries the shapes' timing is shared over (default: the run's GPUS, by
    lab.studies.gpu_pool.gpu_ids; one or none: this process), the decode checks shared out too, `command`:
    time_shared's, `profile(calls, out_dir, gpu=...) -> records` (lab.measure.decode_profile.profile_decode_shapes's;
    by default only where the measuring is the GPU's)."""
    from lab.kernels import manifest
    from lab.measure.decode_peers import NOT_WIRED
    from lab.studies.params import RunParams

    p = RunParams.read(rec)
    shapes = p.decode_shapes
    out = {"shapes": [s.spec for s in shapes], "steps": [], "builds": {}, "checks": [], "excluded": {},
           "rows": [], "notes": [], "streams": {}, "seconds": {}, "peers_not_measured": dict(NOT_WIRED)}
    if not shapes:
        out["reason"] = "no decode shapes (DECODE is empty)"
        rec.write_json("decode.json", out)
        return out
    steps = manifest.names(problem=manifest.DECODE)
    end = branch_end()
    out.update(steps=steps, end=end)
    t0 = time.perf_counter()

    fns = {}
    for name, (fn, summary) in (build or gpu_build)(steps, progress).items():
        out["builds"][name] = summary
        if fn is None:
            out["excluded"][name] = f"not built: {summary.get('error', '')[:500]}"
        else:
            fns[name] = fn
    out["seconds"]["build"] = round(time.perf_counter() - t0, 2)

    t1 = time.perf_counter()
    built = [s for s in steps if s in fns]  # the manifest's order: a child computes the same cases from it
    cases = check_cases(p, built, end)
    gpus = _gpus(p) if gpus is None else gpus
    shared = {}
    if len(gpus) > 1:  # the children check their share of the cases, then time their share of the shapes
        if measure in (None, gpu_measure):
            _release_cached_memory()  # this process's build loaded the steps; the children need the GPUs
        shared = time_shared(rec, len(shapes), built, gpus, progress, command, cases, [timing_cost(s) for s in shapes])
    check = check or gpu_check
    for k, (step, shape, index) in enumerate(cases):
        result = shared.get("checks", {}).get(k) or check(step, fns[step], shape, index)  # none: checked here
        out["checks"].append(result)
        if not result.get("passed") and step not in out["excluded"]:
            out["excluded"][step] = f"failed the decode check at {result.get('case', shape.id)}: " \
                                    f"{str(result.get('error') or result.get('max_abs_err'))[:300]}"
    kernels = {n: fn for n, fn in fns.items() if n not in out["excluded"]}
    passed = sum(bool(r.get("passed")) for r in out["checks"])
    progress(f"  decode: {len(out['checks'])} checks, {passed} passed; {len(kernels)} of {len(steps)} steps timed")
    out["seconds"]["correctness"] = round(time.perf_counter() - t1, 2)  # shared: the children's timing too

    t2 = time.perf_counter()
    time_set(rec, p, out, kernels, progress, copy, measure, peers, l2_bytes, shared)
    out["seconds"]["timing"] = round(time.perf_counter() - t2, 2)
    if profile is None and measure in (None, gpu_measure):
        profile = gpu_profile
    if p.profile and profile is not None:
        t3 = time.perf_counter()
        if profile is gpu_profile:
            _release_cached_memory()  # the timing's inputs: ncu's process needs the GPU
        profile_set(rec, p, out, [s for s in built if s in kernels], profile, progress, gpus)
        out["seconds"]["profile"] = round(time.perf_counter() - t3, 2)
    out["seconds"]["total"] = round(time.perf_counter() - t0, 2)
    rec.write_json("decode.json", out)
    return out


def time_set(rec, p, out: dict, kernels: dict, progress=print, copy=None, measure=None, peers=None, l2_bytes=None,
             shared: dict | None = None) -> None:
    """run()'s timing: the copy, then every shape of the run's DECODE with `kernels` (the steps that built and
    passed) and the peers, in this process, or, for the shapes in `shared` (time_shared's), the rows its
    children measured, less those of a step the checks left out; `out` (decode.json) and
    decode_samples.parquet rewritten after each shape. The stand-ins are run()'s."""
    import pandas as pd

    shapes = p.decode_shapes
    shared = shared or {}
    t2 = time.perf_counter()
    out["copy"] = (copy or gpu_copy)()
    out["l2_bytes"] = _l2_bytes() if l2_bytes is None else l2_bytes
    measure = measure or gpu_measure
    peers = gpu_peers(p) if peers is None else peers
    clocks = gpu_clocks() if measure is gpu_measure else None
    if shared.get("parts"):
        out["copies"] = {gpu: got["copy"] for gpu, got in shared["parts"].items()}
        out["seconds"]["children"] = {gpu: got.get("seconds", {}) for gpu, got in shared["parts"].items()}
    left_out = set(out["excluded"])
    frames = []
    for i, shape in enumerate(shapes, 1):
        out["streams"][shape.id] = _streams(shape, out["l2_bytes"])
        if i in shared.get("shapes", {}):  # a child's, less any step a check elsewhere failed
            samples, rows, notes = shared["shapes"][i]
            samples = [r for r in samples if r.get("impl") not in left_out]
            rows = [r for r in rows if r.get("impl") not in left_out]
        else:
            progress(f"  decode shape {i} of {len(shapes)}: {shape}")
            samples, rows, notes = measure_one(measure, shape, kernels, peers, p, clocks, rec.run_id, i, progress)
        out["rows"] += rows
        out["notes"].append(notes)
        if samples:
            frames.append(pd.DataFrame(samples))
            rec.write_table("decode_samples.parquet", pd.concat(frames, ignore_index=True))
        out["seconds"]["timing"] = round(time.perf_counter() - t2, 2)
        rec.write_json("decode.json", out)  # what was measured so far is never lost
    if shared.get("parts"):
        import shutil

        shutil.rmtree(rec.path(PARTS_DIR), ignore_errors=True)  # all of it is in decode.json now


def profile_set(rec, p, out: dict, steps: list[str], profile, progress=print, gpus: list[str] = ()) -> None:
    """Nsight Compute over one call of each timed decode step (`steps`, the manifest's order) and of each peer
    that took the shape (a row of it in out["rows"]; UNPROFILED_PEERS aside, each a record saying why) at
    lab.studies.shapes.decode_profile_shapes, on the first of the run's GPUs, every shape in one call of
    `profile(calls, out_dir, gpu=...)` (calls: (shape, names) in order; lab.measure.decode_profile.
    profile_decode_shapes: one ncu process): out["profile"], a record an implementation and shape, written with
    decode.json; the raw captures under ncu/."""
    from lab.studies.measure_decode import DECODE_SHAPE_COLUMNS, decode_columns
    from lab.studies.profiling import run_relative
    from lab.studies.shapes import decode_profile_shapes

    calls, left_out = [], []
    for shape in decode_profile_shapes(p.decode_shapes):
        cols = decode_columns(shape)
        took = {r["impl"] for r in out["rows"] if all(r.get(c) == cols[c] for c in DECODE_SHAPE_COLUMNS)}
        skipped = sorted(took & UNPROFILED_PEERS.keys())
        names = [s for s in steps if s in took] + sorted(took - set(steps) - set(skipped))
        left_out += [{"impl": n, "shape": shape.spec, "ok": False, "reason": UNPROFILED_PEERS[n]} for n in skipped]
        if names:
            calls.append((shape.spec, names))
    profiled = run_relative(rec, profile(calls, rec.path("ncu"), gpu=gpus[0] if gpus else None)) if calls else []
    out["profile"] = profiled + left_out
    for spec, names in calls:
        ok = sum(bool(r.get("ok")) for r in out["profile"] if r.get("shape") == spec)
        progress(f"  decode profile {spec}: {ok} of {len(names)} calls profiled")
    rec.write_json("decode.json", out)


def measure_one(measure, shape, kernels, peers, p, clocks, run_id: str, i: int, progress) -> tuple:
    """Shape `i` (1-based) of the run's DECODE timed, its seed the run's + 3000 + i wherever it runs; a shape
    that raises is a note, never the set's end (one failing shape never takes the set down)."""
    try:
        return measure(shape, kernels, peers, _modes(p), decode_rule(p), clocks, run_id, p.seed + 3000 + i, progress)
    except Exception as exc:  # noqa: BLE001 - recorded, the others go on
        return [], [], {"shape": shape.id, "errors": {"shape": f"{type(exc).__name__}: {exc}"}}


def _modes(p) -> list[str]:
    return [m for m in p.modes if m in DECODE_MODES] or ["hot"]


PARTS_DIR = "decode_parts"  # the children's files, under the run's folder until their shapes are in decode.json


def child_command(run_dir, indices: list[int], steps: list[str], out, checks: list[int] = ()) -> list[str]:
    """One GPU's child (lab.studies.decode_child): the check cases `checks` (indices into check_cases), then
    the run's decode shapes `indices`, with `steps`, written to `out`."""
    import sys

    return [sys.executable, "-m", "lab.studies.decode_child", str(run_dir), "--shapes", ",".join(map(str, indices)),
            "--steps", ",".join(steps), "--checks", ",".join(map(str, checks)), "--out", str(out)]


def case_id(case) -> str:
    """A check case's name, the same in the stage and in a child: step/shape/seed index."""
    step, shape, index = case
    return f"{step}/{shape.id}/{index}"


# A decode shape's timing (its steps and peers together, both modes) costs about 0.99 s plus 0.095 s a GB of K/V
# cache on an H200 since its inputs are drawn on the GPU: fit to shapes 2-18 of the set (the first carries the
# warm-up), 0.7-1.5 s each (data/explorations/2026-12-01-decode-set-cost/stage.txt). Drawn on the host, the inputs
# had made it 1.14 s plus 4.16 s a GB. The cost a shape is dealt by, in bytes:
SHAPE_FIXED_COST_BYTES = 10.4e9


def timing_cost(shape) -> float:
    """A decode shape's estimated timing cost, in bytes of K/V cache (what time_shared deals shapes by)."""
    return SHAPE_FIXED_COST_BYTES + shape.cache_bytes


def time_shared(rec, n_shapes: int, steps: list[str], gpus: list[str], progress=print, command=None,
                cases: list = (), costs: list[float] | None = None) -> dict:
    """One child a GPU of `gpus`, side by side: each checks every len(gpus)-th of `cases` (check_cases's), then
    times its part of the run's decode shapes 1..n_shapes with `steps` less those its own checks failed: the
    parts balanced by the shapes' `costs` (timing_cost's, in the shapes' order; without them every
    len(gpus)-th shape, lab.studies.gpu_share.shares). {"checks": {case index: result}, "shapes": {shape
    index: (samples, rows, notes)}, "parts": {gpu: the child's file}} of what the children finished; a case
    or shape no child finished is left to the caller (done in its process), and so is leaving out the rows
    of a step that failed a check in another child. Each shape's comparisons stay within one process on one
    GPU, as in the one-process set."""
    import json

    from lab.studies.gpu_share import balanced, run_children, shares

    command = command or child_command
    indices = list(range(1, n_shapes + 1))
    parts = balanced(indices, costs, len(gpus)) if costs is not None else shares(indices, len(gpus))
    case_parts = shares(list(range(len(cases))), len(gpus))
    where = rec.path(PARTS_DIR)
    where.mkdir(exist_ok=True)
    outs = [where / f"part{k}.json" for k in range(len(gpus))]
    progress(f"  decode: {len(cases)} checks and {n_shapes} shapes over {len(gpus)} GPUs, one process a GPU")
    codes = run_children([command(rec.dir, part, steps, o, c) for part, c, o in zip(parts, case_parts, outs)],
                         gpus, progress)
    got = {"checks": {}, "shapes": {}, "parts": {}}
    for gpu, part, o, code in zip(gpus, parts, outs, codes):
        try:
            child = json.loads(o.read_text())
        except (OSError, ValueError):
            child = {}
        if child.get("copy") is not None:
            got["parts"][gpu] = child
        for k, result in child.get("checks", {}).items():
            if child.get("check_ids", {}).get(k) == case_id(cases[int(k)]):  # the case asked of it
                got["checks"][int(k)] = result
        done = [i for i in child.get("shapes", []) if i in part]
        for i in done:
            r = child["results"][str(i)]
            got["shapes"][i] = (r["samples"], r["rows"], r["notes"])
        if len(done) < len(part):
            progress(f"  decode: the part on GPU {gpu} exited with code {code} after {len(done)} of its {len(part)} "
                     "shapes: the others are timed here")
    return got


# --- the defaults: on the GPU -------------------------------------------------------------------


def gpu_build(steps: list[str], progress) -> dict:
    from lab.kernels import build as build_mod

    results = build_mod.build_all(steps, progress=progress)
    loaded = {}
    for name, r in results.items():
        summary = {**r.summary(), "error": r.log[:2000] if not r.ok else ""}
        fn = None
        if r.ok:
            try:
                fn = r.load()
            except Exception as exc:  # noqa: BLE001 - recorded, the others go on
                summary["error"] = f"load: {type(exc).__name__}: {exc}"[:2000]
        loaded[name] = (fn, summary)
    return loaded


def gpu_check(step, fn, shape, index) -> dict:
    from lab.measure.decode_check import check_decode_case

    return check_decode_case(step, lambda q, k, v, lens, table, o: fn(q, k, v, lens, table, out=o), shape, index)


def gpu_copy() -> dict:
    from lab.studies.measure_decode import copy_bandwidth

    return copy_bandwidth()


def gpu_measure(*args, **kwargs):
    from lab.studies.measure_decode import measure_decode_shape

    return measure_decode_shape(*args, **kwargs)


def gpu_profile(calls, out_dir, gpu=None) -> list[dict]:
    from lab.measure.decode_profile import profile_decode_shapes

    return profile_decode_shapes(calls, out_dir, gpu=gpu)


def gpu_peers(p) -> list:
    """The run's decode peers: SDPA under its backends, and flex_attention where the run's peers hold it (a run
    recorded before peers.json, p.peers None, timed SDPA alone)."""
    from lab.measure.decode_peers import DecodeFlexPeer, DecodeSdpaPeer
    from lab.measure.peers import FLEX

    named = p.resolved().peers if p.peers == () else (p.peers or ())  # (): the defaults, as params.json names them
    return [DecodeSdpaPeer(b) for b in p.backends] + ([DecodeFlexPeer()] if FLEX in named else [])


def gpu_clocks():
    from lab.measure.clocks import Clocks

    return Clocks()


def _l2_bytes() -> int:
    from lab.measure import timing

    return timing.l2_bytes()


def _streams(shape, l2_bytes: int) -> bool:
    from lab.studies.shapes import streams_from_hbm

    return bool(l2_bytes) and streams_from_hbm(shape, l2_bytes)


def _gpus(p) -> list[str]:
    from lab.studies import gpu_pool

    return gpu_pool.gpu_ids(p.gpus)


def _release_cached_memory() -> None:
    import torch

    torch.cuda.empty_cache()
