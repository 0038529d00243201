"""A measurement run: its stages in order (build, correctness, timing with the decode set and the
factorial after it, profile), each reading the run's parameters back from its record and writing into it.

    python -m lab run --shapes canonical,large --modes hot --profile 0   # options: lab.studies.params

A variant that fails to build or fails correctness is recorded and left out of timing; the
others go on. Samples are written after every shape, so a run stopped midway keeps what it
measured (its status stays "running"/"incomplete").
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from dataclasses import replace

from lab.kernels.shape import Shape
from lab.progress import Counter
from lab.measure import records
from lab.measure.crossval import cross_validate
from lab.studies.params import RunParams
from lab.studies.peer_check import run_peers
from lab.studies.profiling import (JUDGED, NOT_PROFILED_REASON, PROFILED_PEERS, judged_profile_work, ncu_crosscheck,
                                   one_per_s_and_d, profile_run, select_profile_shapes, side_by_side)

STAGES = ("build", "correctness", "timing", "profile")  # in order; notebook 0i_<stage>.ipynb runs stage i


def _timing_parts_left(done: dict, knockouts: bool, decode: bool) -> list[str]:
    """The parts the timing stage runs after its own timing that stages.json (`done`) does not hold yet, in
    order: the decode set where the run has decode shapes, then the factorial where it has knock-outs."""
    return [part for part, wanted, key in (("decode set", decode, "decode_s"), ("factorial", knockouts, "factorial_s"))
            if wanted and key not in done]


def stage_done(name: str, done: dict, knockouts: bool, decode: bool = False) -> bool:
    """Whether stages.json (`done`) holds the whole of stage `name`: the timing stage ends with the
    decode set where the run has decode shapes, then the factorial where it has knock-outs (a run
    stopped between them resumes with what is left)."""
    if name == "timing" and _timing_parts_left(done, knockouts, decode):
        return False
    return f"{name}_s" in done


def left_to_run(name: str, done: dict, knockouts: bool, decode: bool = False) -> str:
    """What of stage `name` a resume still runs, as resumes.json names it: the stage's name, but for a timing
    stage with its decode set or factorial, which it runs after its own timing: "timing with its decode set and
    factorial" where the timing is not done, "timing's factorial" where only the factorial is left."""
    if name != "timing":
        return name
    parts = _timing_parts_left(done, knockouts, decode)
    if "timing_s" not in done:
        return f"timing with its {' and '.join(parts)}" if parts else "timing"
    return f"timing's {' and '.join(parts)}"


def comparable_stage_seconds(rec, root=None) -> tuple[str | None, dict[str, float]]:
    """(run id, {stage: seconds}) of the latest complete run before `rec` on the same GPU model with
    the same parameters (what a progress bar's ETA starts from: lab.progress.eta_s), or (None, {})."""
    if not rec.has("env.json") or not rec.has("params.json"):
        return None, {}
    gpu, params = rec.read_json("env.json").get("gpu"), RunParams.read(rec)
    for run_id in reversed(records.list_runs(root or rec.dir.parent)):
        if run_id >= rec.run_id:
            continue
        other = records.RunRecord.open(run_id, root or rec.dir.parent)
        if (other.status.get("state") != "complete" or not other.has("stages.json") or not other.has("params.json")
                or not other.has("env.json") or other.read_json("env.json").get("gpu") != gpu):
            continue
        try:
            same = RunParams.read(other) == params
        except (ValueError, KeyError, TypeError):  # a run recorded before a parameter existed
            same = False
        if same:
            seconds = {k.removesuffix("_s"): float(v) for k, v in other.read_json("stages.json").items()
                       if k.endswith("_s") and isinstance(v, (int, float))}
            return run_id, seconds
    return None, {}


def start(params: RunParams | None = None, progress=print) -> records.RunRecord:
    """Open a new run record with its environment and parameters (RunParams; default: the
    defaults); the stages read them back. Which peers are absent, and why, goes to peers.json."""
    import torch

    from lab.measure import peers as peer_mod

    from lab.studies import gpu_pool

    params = (params or RunParams()).resolved()
    params.validate()
    if not torch.cuda.is_available():
        raise RuntimeError("a run needs a CUDA GPU (torch.cuda.is_available() is False)")
    params = replace(params, gpus=gpu_pool.for_run(params.gpus, progress))  # the count it ran on, recorded
    rec = records.RunRecord()
    progress(f"run {rec.run_id} -> {rec.dir}")
    rec.write_json("env.json", records.environment())
    _, availability = peer_mod.resolve(list(params.peers))
    rec.write_json("peers.json", availability)
    for name, st in availability.items():
        if not st["available"]:
            progress(f"  peer {name} absent: {st['reason']}")
    rec.write_json("params.json", params.to_json())
    rec.write_json("stages.json", {})
    return rec


def _timed_stage(rec, name, fn, progress, earlier_s: float = 0.0):
    """Run a stage, recording its seconds in stages.json (plus `earlier_s`: what a resumed stage
    spent before it was stopped, also recorded under `resumed`)."""
    t0 = time.perf_counter()
    progress(f"[{name}]")
    try:
        return fn()
    except BaseException as exc:
        rec.finish("incomplete", error=f"stage {name}: " + "".join(traceback.format_exception_only(exc)).strip())
        raise
    finally:
        stages = rec.read_json("stages.json")
        stages[f"{name}_s"] = round(time.perf_counter() - t0 + earlier_s, 1)
        if earlier_s:  # not a "<stage>_s" key: readers take every such key for a stage of its own
            stages.setdefault("resumed", {})[name] = round(earlier_s, 1)
        rec.write_json("stages.json", stages)


@contextlib.contextmanager
def _part(rec, stage: str, part: str):
    """Time the block into stages.json's `parts` ({stage: {part_s: seconds}}): the work of a stage
    outside its replicates (what the stage's seconds hold besides replicates.json's), so that a
    stage's time can be taken apart from the run folder alone."""
    t0 = time.perf_counter()
    yield
    _record_part(rec, stage, part, time.perf_counter() - t0)


def _record_part(rec, stage: str, part: str, seconds: float) -> None:
    with _PARTS_LOCK:  # parts run side by side on several GPUs (stage_profile)
        stages = rec.read_json("stages.json") if rec.has("stages.json") else {}
        stages.setdefault("parts", {}).setdefault(stage, {})[f"{part}_s"] = round(seconds, 1)
        rec.write_json("stages.json", stages)


_PARTS_LOCK = threading.Lock()


def knockout_configs(p: RunParams) -> dict[str, tuple[str, dict, str]]:
    """The run's knock-out configurations, impl -> (kernel, defines, applies_to); none when the
    run's `knockouts` parameter is off (runs recorded before it existed had none)."""
    from lab.kernels import switches

    return switches.run_configs(list(p.variants)) if p.knockouts else {}


def applies(applies_to: str, shape: Shape) -> bool:
    from lab.kernels import switches

    return switches.applies(applies_to, shape.D, shape.causal)


def _built(rec) -> dict:
    """The variants and knock-outs that built and passed correctness: their cached builds
    (lab.kernels.build.BuildResult), not loaded."""
    from lab.kernels import build

    excluded = rec.read_json("excluded.json") if rec.has("excluded.json") else {}
    p = RunParams.read(rec)
    names = [n for n in p.variants if n not in excluded]
    configs = {i: (k, d) for i, (k, d, _) in knockout_configs(p).items() if i not in excluded}
    built = build.build_all(names, progress=lambda s: None, configs=configs)
    return {n: r for n, r in built.items() if r.ok}


def _not_taken(build, shape: Shape) -> str:
    """Why a build (lab.kernels.build.BuildResult) does not take the shape's dtype or K/V heads, ''.
    A stand-in without the question (the CPU tests' builds) takes every shape."""
    ask = getattr(build, "not_taken", None)
    return ask(shape) if ask is not None else ""


def loaded_kernels(rec):
    """The variants and knock-outs that built and passed correctness, loaded from their cached builds."""
    return {n: r.load() for n, r in _built(rec).items()}


def stage_build(rec, progress=print) -> dict:
    from lab.kernels import build, manifest
    from lab.measure import hold

    def body():
        p = RunParams.read(rec)
        configs = {i: (k, d) for i, (k, d, _) in knockout_configs(p).items()}
        # the decode steps too, on the same cores at once: the decode set then finds them built (it records them)
        decode = [n for n in manifest.names(problem=manifest.DECODE) if n not in p.variants] if p.decode_shapes else []
        count = Counter(rec.run_id, "build", len(p.variants) + len(configs) + len(decode))
        built = build.build_all(list(p.variants) + decode, progress=progress, configs=configs, tick=count.tick)
        for name in decode:
            built.pop(name, None)
        rec.write_json("build.json", {n: {**r.summary(), "error": r.log if not r.ok else ""} for n, r in built.items()})
        rec.write_json("excluded.json", {n: r.log if r.log.startswith("not built") else "build failed: " + r.log[:2000]
                                        for n, r in built.items() if not r.ok})
        # the hold in front of every block of samples, built here so no replicate pays for it; what
        # held the blocks is recorded with the run (a fixed sleep where it cannot be built)
        env = rec.read_json("env.json") if rec.has("env.json") else {}
        rec.write_json("env.json", {**env, "sample_hold": hold.kind()})
        return built

    return _timed_stage(rec, "build", body, progress)


def stage_correctness(rec, progress=print) -> list:
    from lab.measure import check as checks
    from lab.studies import gpu_pool, gpu_share, peer_check

    def body():
        mode = RunParams.read(rec).check
        excluded = rec.read_json("excluded.json")
        if mode == "none":
            if rec.has("peers.json"):  # said, not silent: the peers are timed unchecked too
                rec.write_json("peers.json", {n: {**st, "correctness": "not checked (check=none)"}
                                              for n, st in rec.read_json("peers.json").items()})
            return []
        cases = checks.grid() if mode == "full" else checks.small_grid()
        count = Counter(rec.run_id, "correctness", len(cases))
        gpus = gpu_pool.gpu_ids(RunParams.read(rec).gpus)

        def here(part):  # in this process, on its GPU
            return list(checks.run_grid(loaded_kernels(rec), part, progress=progress, tick=count.tick))

        t0 = time.perf_counter()
        pending_peers = peer_check.start(rec, gpus, progress)  # in children beside the grid: compiles, mostly
        with _part(rec, "correctness", "grid"):  # several GPUs: one child a GPU, each every n-th case (issue 49)
            results = gpu_share.check_shared(rec, cases, gpus, here, progress, count.tick) if gpus else here(cases)
        rec.write_json("correctness.json", checks.as_records(results))
        for n in _built(rec):
            failed = [r for r in results if r.variant == n and r.failed]  # a case not taken is no failure
            if failed:
                excluded[n] = f"failed {len(failed)} correctness cases, e.g. {failed[0].explain()}"
        rec.write_json("excluded.json", excluded)
        skipped = sum(bool(r.unsupported) for r in results)
        progress(f"  {len(results) - skipped} checks, {sum(r.passed for r in results)} passed; {skipped} not taken "
                 "(a step asked for a dtype or K/V heads it does not take)")
        peer_results = peer_check.finish(rec, pending_peers, progress)
        _record_part(rec, "correctness", "peers", time.perf_counter() - t0)  # from their start, beside the grid
        return results + peer_results

    return _timed_stage(rec, "correctness", body, progress)


def timing_jobs(p: RunParams, kernels: list[str], not_taken=None) -> list:
    """What each replicate of the timing measures, shape by shape (lab.studies.replicates.Job): at a ladder shape
    every kernel (a knock-out only where its switch changes the kernel) and the A/A twin of the headline branch's
    end; at the long shapes the branch ends and the headline end's parent (a step acting only there is measured
    against its parent); at the models shapes the branch ends, the knock-outs where their switch changes the
    kernel and the kernels they are measured against, within the scope's sample budget (SCOPE_CAP_S); at the sweep
    shapes the branch ends, hot only; the peers everywhere, less a scope's SCOPE_PEERS_LEFT_OUT. `not_taken(kernel,
    shape)`: why a kernel does not take the shape's dtype or K/V heads ('' where it does; the job records it and
    leaves the kernel out). Each shape's interleave seed is the run's plus its index."""
    from lab.kernels.manifest import branch_ends, get, headline_end
    from lab.studies.replicates import Job
    from lab.studies.shapes import SCOPE_CAP_S, SCOPE_PEERS_LEFT_OUT

    variant_names = [n for n in kernels if n in p.variants]
    aa = headline_end(variant_names) or None
    configs = knockout_configs(p)
    ko_applies = {i: a for i, (_, _, a) in configs.items()}
    tails = set(branch_ends(variant_names))
    burst = [m for m in p.modes if m != "sustained"]  # the modes every job takes; sustained: its own jobs
    jobs = []
    for i, shape in enumerate(p.shapes, 1):
        if not burst:
            break
        scope = p.scopes[shape]
        if scope == "ladder":
            here = [n for n in kernels if n not in ko_applies or applies(ko_applies[n], shape)]
        elif scope == "models":
            kos = [n for n in kernels if n in ko_applies and applies(ko_applies[n], shape)]
            against = {configs[n][0] for n in kos}
            here = [n for n in kernels if n in tails or n in kos or n in against]
        else:  # the long shapes ("tails") with the headline end's parent, the sweep's without
            here = [n for n in kernels if n in tails or (scope == "tails" and aa and n == get(aa).parent)]
        refused = {n: why for n in here if not_taken is not None and (why := not_taken(n, shape))}
        cap = SCOPE_CAP_S.get(scope)
        modes = ["hot"] if scope == "tails-hot" else burst
        if not modes:  # the sweep is hot only, and this run has no hot mode
            continue
        jobs.append(Job(shape, [n for n in here if n not in refused], True,
                        modes, aa if scope == "ladder" else None,
                        p.seed + i, scope, refused,
                        # the scope's budget, shared out among the replicates as the run's CAP is
                        None if cap is None or cap >= p.cap_s else cap / p.replicates,
                        list(SCOPE_PEERS_LEFT_OUT.get(scope, ()))))
    return jobs + sustained_jobs(p, kernels, not_taken)


def sustained_jobs(p: RunParams, kernels: list[str], not_taken=None) -> list:
    """The sustained mode's jobs (lab.measure.timing.SustainedTimer), after the others: at each of the
    run's shapes that its SUSTAINED spec names (RunParams.sustained_shapes), the headline branch's end (the
    sm_90a one where the run has it), its parent and SUSTAINED_PEERS, where the run asks for the mode; none
    otherwise. Each its own interleave seed (the run's + 2000 + the shape's index)."""
    from lab.kernels import manifest
    from lab.studies.replicates import Job
    from lab.studies.shapes import SUSTAINED_PEERS

    if not (wanted := set(p.sustained_shapes)):
        return []
    variant_names = [n for n in kernels if n in p.variants]
    end = manifest.headline_end(variant_names)
    rows = [n for n in (end, manifest.get(end).parent if end else None) if n in variant_names]
    jobs = []
    for i, shape in enumerate(p.shapes, 1):
        if shape not in wanted:
            continue
        refused = {n: why for n in rows if not_taken is not None and (why := not_taken(n, shape))}
        jobs.append(Job(shape, [n for n in rows if n not in refused], True, ["sustained"], None, p.seed + 2000 + i,
                        "sustained", refused, None, [], list(SUSTAINED_PEERS)))
    return jobs


def stage_timing(rec, progress=print, spawn=None) -> None:
    """Ceilings, then the run's R replicates of every shape with every implementation (each a
    fresh process: lab.studies.replicates, which writes samples.parquet, stops.parquet and
    replicates.json), then the cross-validation; then the decode set, with the factorial's builds beside it
    (lab.studies.factorial.start_prebuild); then the factorial. `spawn`: how a replicate is run
    (default: a child process on this GPU). The summary and the calibration are computed from these
    records when read (lab.studies.derived). A run resumed after it was stopped here keeps the
    replicates it measured in full (lab.studies.replicates.run) and, once the timing is recorded,
    runs only what is left of the decode set and the factorial."""

    from lab.measure import peers as peer_mod
    from lab.studies import factorial, gpu_pool, replicates

    def body():
        p = RunParams.read(rec)
        with _part(rec, "timing", "ceilings"):
            try:
                from lab.measure import roofline

                rec.write_json("ceilings.json", roofline.measure_ceilings())
            except Exception as exc:  # noqa: BLE001 - recorded; the report says the ceiling is missing
                rec.write_json("ceilings.json", {"error": f"{type(exc).__name__}: {exc}"})
        built = _built(rec)
        peers = [peer.name for peer in run_peers(rec)]
        progress(f"  {len(p.shapes)} shapes x {len(built)} variants + peers {peers}, modes {p.modes}, "
                 f"{p.replicates} replicate(s)")
        jobs = timing_jobs(p, list(built), not_taken=lambda n, shape: _not_taken(built[n], shape))
        replicates.write_plan(rec, "timing", jobs, {n: r.summary() for n, r in built.items()},
                              peers, p.replicate_rule(), p.replicates, p.seed)
        replicates.run(rec, "timing", progress, executor=pool.executor(), **({"spawn": spawn} if spawn else {}))
        with _part(rec, "timing", "crossval"):
            rec.write_json("crossval.json", [cross_validate(shape, peer_mod.SdpaPeer("flash")) for shape in p.shapes
                                              if p.scopes[shape] == "ladder"])

    done = rec.read_json("stages.json") if rec.has("stages.json") else {}
    p = RunParams.read(rec)
    with gpu_pool.SharedPool(p.gpus) as pool:  # one for the timing's and the factorial's replicates
        if "timing_s" not in done:
            _timed_stage(rec, "timing", body, progress, earlier_s=replicates.seconds_measured(rec, "timing"))
        factorial_left = bool(p.knockouts) and "factorial_s" not in done
        decode_left = bool(p.decode_shapes) and "decode_s" not in done
        # the factorial's builds need the CPU only: they go on beside the decode set, which holds the GPUs
        prebuild = factorial.start_prebuild(rec) if factorial_left and decode_left else None
        if decode_left:
            _timed_stage(rec, "decode", lambda: decode_stage(rec, progress), progress)
        if factorial_left:
            _timed_stage(rec, "factorial", lambda: factorial_stage(rec, progress, spawn, prebuild, pool), progress,
                         earlier_s=replicates.seconds_measured(rec, "factorial"))


def decode_stage(rec, progress=print, **stand_ins) -> dict:
    """The decode set (lab.studies.decode_study); an error in it is recorded in decode.json and said,
    and never takes the prefill study down. `stand_ins`: decode_study.run's, for the tests."""
    from lab.studies import decode_study

    try:
        return decode_study.run(rec, progress, **stand_ins)
    except Exception as exc:  # noqa: BLE001 - recorded; the report says the decode set failed
        kept = rec.read_json("decode.json") if rec.has("decode.json") else {}
        error = "".join(traceback.format_exception_only(exc)).strip()
        rec.write_json("decode.json", {**kept, "error": error})
        progress(f"  decode set failed: {error}")
        return {**kept, "error": error}


def factorial_stage(rec, progress=print, spawn=None, prebuild=None, pool=None) -> None:
    """The 2^4 factorial of lab.studies.factorial for the kernel of the run that declares switches;
    `prebuild`: the process building its configurations ahead (factorial.start_prebuild), waited for first;
    `pool`: the timing's replicate pool (lab.studies.gpu_pool.SharedPool)."""
    from lab.studies import factorial

    if prebuild is not None:
        with _part(rec, "factorial", "prebuild_wait"):
            prebuild.wait()
    kernel = factorial.kernel_of(rec)
    if kernel is None:
        rec.write_json("factorial.json", {"ok": False, "reason": "no variant of this run declares switches"})
        return
    factorial.run(rec, kernel, progress, spawn, pool)


def stage_profile(rec, progress=print) -> None:
    from lab.kernels.manifest import manifest
    from lab.studies import ahead, gpu_pool

    def body():
        p = RunParams.read(rec)
        if not p.profile:
            rec.write_json("profile_status.json", {"ok": False, "reason": "profiling turned off for this run"})
            progress("  skipped (profile off)")
            return
        # the ladder's shapes: the long and sweep shapes are timed for the bar and the figure only
        ladder = [s for s, scope in p.scopes.items() if scope == "ladder"]
        shapes = select_profile_shapes(ladder, p.profile_shapes)
        kernels = loaded_kernels(rec)
        # a step judged at a shape not profiled: it and its parent there, and nothing else (the report's hypothesis)
        judged = judged_profile_work(manifest(), set(kernels), ladder, shapes)
        shapes = shapes + list(judged)
        timed = [peer.name for peer in run_peers(rec)]
        peers = [n for n in timed if n in PROFILED_PEERS]
        not_profiled = {n: NOT_PROFILED_REASON for n in timed if n not in PROFILED_PEERS}
        progress(f"  {len(shapes)} shapes x {len(_built(rec)) + len(peers)} implementations")
        ko_applies = {i: a for i, (_, _, a) in knockout_configs(p).items()}
        # knock-outs: where their switch changes the kernel, at one shape per (S, D) (the time a run may take)
        ko_shapes = set(one_per_s_and_d(ladder))

        def where(impl: str, shape: Shape) -> bool:
            if shape in judged:
                return impl in judged[shape]
            return impl not in ko_applies or (applies(ko_applies[impl], shape) and shape in ko_shapes)

        count = Counter(rec.run_id, "profile", len(shapes))
        gpus = gpu_pool.gpu_ids(p.gpus)

        def xval() -> None:  # on the last GPU where there are several: beside the shapes, under its lock
            with _part(rec, "profile", "ncu_xval"):
                rec.write_json("ncu_xval.json", ncu_crosscheck(rec, timed, progress, gpus[-1] if gpus else None))

        def sass_mix() -> None:  # the CPU's work (cuobjdump)
            with _part(rec, "profile", "sass_mix"):
                rec.write_json("sass_mix.json", sass_mix_of_run(rec, timed, progress))

        def shapes_run() -> None:
            profile_run(rec, list(kernels), shapes, peers, progress, not_profiled=not_profiled, where=where,
                        not_taken=lambda impl, shape: _not_taken(kernels[impl], shape), tick=count.tick, gpus=gpus,
                        purpose={shape: JUDGED for shape in judged})

        t0, background = time.perf_counter(), ahead.start(rec)  # the report's statistics, on the idle cores
        side_by_side([shapes_run, xval, sass_mix], together=bool(gpus))  # several GPUs: together (issue 49)
        if background is not None:
            if code := background.wait():
                progress(f"  the report's kept results not computed ahead (exit {code}): the report computes them")
            _record_part(rec, "profile", "derived_ahead", time.perf_counter() - t0)

    return _timed_stage(rec, "profile", body, progress)


def sass_mix_of_run(rec, timed: list[str], progress=print) -> dict:
    """The run's headline branch end's K/V loops beside FA3's, instruction class by class
    (lab.studies.sass_compare: from the end's built library, and FA3's where the run times it); never
    raises (a failure is the record's "errors")."""
    from lab.kernels.manifest import headline_end
    from lab.kernels.sass_mix import dump_sass
    from lab.studies import sass_compare

    library, missing = None, []
    if "flash_attn3" in timed:
        try:
            from lab.measure import fa3

            library = fa3.library_path()
        except Exception as exc:  # noqa: BLE001 - the step's rows without FA3's, and why
            missing = [f"flash_attn3: {type(exc).__name__}: {exc}"]
    try:
        built = _built(rec)
        end = headline_end([n for n in RunParams.read(rec).variants if n in built])  # steps, not knock-outs
        out = sass_compare.compare(end, dump_sass(built[end].library), library)
        out["errors"] = missing + out["errors"]
    except Exception as exc:  # noqa: BLE001 - the report says the comparison is missing and why
        out = {"rows": [], "errors": missing + [f"{type(exc).__name__}: {exc}"]}
    progress(f"  SASS mix: {len(out['rows'])} kernels" + (f", {len(out['errors'])} not read" if out["errors"] else ""))
    return out


def finish(rec) -> None:
    stages = rec.read_json("stages.json")
    stages["total_s"] = round(sum(v for k, v in stages.items() if k.endswith("_s") and k != "total_s"), 1)
    rec.write_json("stages.json", stages)
    rec.finish("complete", stages=stages)


def run(params: RunParams | None = None, progress=print) -> records.RunRecord:
    """Every stage in order (what the notebooks do one by one)."""
    rec = start(params, progress)
    stage_build(rec, progress)
    stage_correctness(rec, progress)
    stage_timing(rec, progress)
    stage_profile(rec, progress)
    finish(rec)
    return rec
