"""A measurement run: build, check, time (hot and cold, interleaved), profile; all into a run record.

    python -m lab run --shapes canonical,large --modes hot,cold --cap 3 [--no-profile]
    python -m lab compare RUN [BASE]

A variant that fails to build or fails correctness is recorded and left out of timing; the
others go on. Samples are written after every shape, so a run stopped midway keeps what it
measured (its status stays "running"/"incomplete").
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass

from lab.measure import records
from lab.measure.peers import DEFAULT_BACKENDS  # the SDPA backends a run times by default

# --- shape sets ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    B: int
    H: int
    S: int
    D: int
    causal: bool

    @property
    def id(self) -> str:
        return f"B{self.B}-H{self.H}-S{self.S}-D{self.D}-{'causal' if self.causal else 'full'}"

    def __str__(self) -> str:
        return f"({self.B}, {self.H}, {self.S}, {self.D}) {'causal' if self.causal else 'non-causal'}"


SWEEP_TOKENS = 16384  # B * S held fixed across the sweep


LONG_SHAPES = [Shape(B, 16, S, 128, c) for (B, S) in ((2, 8192), (1, 16384), (16, 1024)) for c in (False, True)]
SWEEP_S = (256, 512, 1024, 2048, 4096, 8192, 16384)

# What a shape set is measured with. "ladder": every step, the knock-outs and the A/A twin, in the
# run's modes. "tails": the last step of each branch (lab.manifest.branch_ends) and the peers, in the
# run's modes: the long shapes, where the early steps would take minutes. "tails-hot": the same, hot
# only: the TFLOP/s-vs-S sweep. A shape in several sets takes the widest scope.
SET_SCOPES = {"canonical": "ladder", "large": "ladder", "long": "tails", "sweep": "tails-hot"}
SCOPES = ("ladder", "tails", "tails-hot")  # widest first


def shape_set(name: str) -> list[Shape]:
    """canonical | large | long | sweep | a list like '4,16,512,64' or '4,16,512,64,causal' joined by ';'."""
    if name == "canonical":
        shapes = []
        for B, H in ((1, 8), (4, 16), (8, 16)):
            shapes += [Shape(B, H, 512, 64, False), Shape(B, H, 512, 64, True)]
        return shapes + [Shape(32, 8, 512, 64, False)]
    if name == "large":
        return [Shape(4, 16, 4096, D, c) for D in (64, 128) for c in (False, True)]
    if name == "long":
        return list(LONG_SHAPES)
    if name == "sweep":  # B * S held at SWEEP_TOKENS, H = 16, non-causal: TFLOP/s against S
        return [Shape(SWEEP_TOKENS // S, 16, S, D, False) for D in (64, 128) for S in SWEEP_S]
    shapes = []
    for item in name.split(";"):
        parts = [p.strip() for p in item.split(",") if p.strip()]
        if (len(parts) not in (4, 5) or not all(p.isdigit() for p in parts[:4])
                or (len(parts) == 5 and parts[4] != "causal")):
            raise ValueError(f"shape {item!r}: expected B,H,S,D or B,H,S,D,causal (the word), or a set "
                             f"name ({', '.join(SET_SCOPES)})")
        shapes.append(Shape(*(int(p) for p in parts[:4]), causal=len(parts) == 5))
    return shapes


def scoped_shapes(spec: str) -> dict[Shape, str]:
    """Shape -> scope (SET_SCOPES) for a spec: set names joined by '+' or ',' (e.g.
    'canonical,large,long,sweep'), or explicit shapes (every one "ladder")."""
    parts = spec.replace("+", ",").split(",")
    if not all(part in SET_SCOPES for part in parts):
        return {s: "ladder" for s in shape_set(spec)}
    out: dict[Shape, str] = {}
    for part in parts:
        for s in shape_set(part):
            scope = SET_SCOPES[part]
            out[s] = min(out.get(s, scope), scope, key=SCOPES.index)
    return out


def shapes_from(spec: str) -> list[Shape]:
    """The shapes of a spec (scoped_shapes), in order, without repeats."""
    return list(scoped_shapes(spec))


def scopes_from(spec: str) -> list[str]:
    """Each shape's scope, in shapes_from's order."""
    return list(scoped_shapes(spec).values())


def shape_scopes(p: dict) -> dict[Shape, str]:
    """A run's shape -> scope (runs recorded before scopes measured every shape as "ladder")."""
    shapes = [s if isinstance(s, Shape) else Shape(*s) for s in p["shapes"]]
    return dict(zip(shapes, p.get("shape_scopes") or ["ladder"] * len(shapes)))


# --- measuring one shape -------------------------------------------------------------------

AA_SUFFIX = "__aa"  # the A/A twin: one implementation measured twice in the same interleave


def input_sets(shape: Shape, l2_bytes: int) -> int:
    """How many input sets hot mode rotates through: enough that they do not fit in L2 together."""
    set_bytes = 4 * shape.B * shape.H * shape.S * shape.D * 2  # Q, K, V, O in fp16
    return 1 if set_bytes >= l2_bytes else min(32, math.ceil(2 * l2_bytes / set_bytes))


def measure_shape(shape: Shape, kernels: dict, peers: list, modes, rule, clocks, run_id: str,
                  aa_impl: str | None, seed: int, progress=print):
    """Returns (sample rows, summary rows, notes) for one shape; never raises for one impl."""
    import torch

    from lab.measure import stats, timing

    notes = {"shape": shape.id, "unsupported": {}, "errors": {}}
    n_sets = input_sets(shape, timing.l2_bytes())
    dims = (shape.B, shape.H, shape.S, shape.D)
    sets = [tuple(torch.randn(dims, device="cuda", dtype=torch.float16) for _ in range(4)) for _ in range(n_sets)]

    launches, contexts = {}, {}
    for name, attn in kernels.items():
        launches[name] = [lambda a=attn, t=t: a.launch(t[0], t[1], t[2], t[3], shape.causal) for t in sets]
    for peer in peers:
        reason = peer.unsupported_reason(*sets[0][:3], shape.causal, None)
        if reason:
            notes["unsupported"][peer.name] = reason
            continue
        launches[peer.name] = [peer.bind(t[0], t[1], t[2], shape.causal, None) for t in sets]
        contexts[peer.name] = peer.context
    if aa_impl in launches:
        launches[aa_impl + AA_SUFFIX] = launches[aa_impl]
        if aa_impl in contexts:
            contexts[aa_impl + AA_SUFFIX] = contexts[aa_impl]

    def context_of(name):
        import contextlib

        return contexts[name]() if name in contexts else contextlib.nullcontext()

    sample_rows, summary_rows = [], []
    for mode in modes:
        t0 = time.perf_counter()
        timers = {}
        for name, ls in launches.items():
            try:
                with context_of(name):
                    timers[name] = timing.HotTimer(ls) if mode == "hot" else timing.ColdTimer(ls)
            except Exception as exc:  # noqa: BLE001 - one failing impl never takes the run down
                notes["errors"][f"{name}/{mode}"] = f"{type(exc).__name__}: {exc}"
        state = timing.interleave(timers, rule, clocks=clocks, seed=seed, context_of=context_of)
        for name, st in state.items():
            for i, (lat, clk, thr) in enumerate(zip(st["samples"], st["clock_mhz"], st["throttled"])):
                sample_rows.append(dict(run_id=run_id, impl=name, B=shape.B, H=shape.H, S=shape.S, D=shape.D,
                                        causal=shape.causal, dtype="float16", mode=mode, sample=i, latency_us=lat,
                                        sm_clock_mhz=clk, throttled=thr))
            kept = [x for x, thr in zip(st["samples"], st["throttled"]) if not thr]
            if not kept:
                notes["errors"][f"{name}/{mode}"] = "every sample was taken while throttled"
                continue
            summ = stats.summarize(kept)
            lo, hi = stats.median_ci(kept)
            summary_rows.append(dict(impl=name, B=shape.B, H=shape.H, S=shape.S, D=shape.D, causal=shape.causal,
                                     mode=mode, **summ, ci_lo_us=lo, ci_hi_us=hi,
                                     tflops=stats.tflops(*dims, shape.causal, summ["median_us"]),
                                     gbps=stats.effective_gbps(*dims, summ["median_us"]),
                                     stopped_by=st["stopped_by"], dropped_throttled=len(st["samples"]) - len(kept),
                                     input_sets=n_sets if mode == "hot" else 1))
        progress(f"    {mode:<4} {len(timers)} impls in {time.perf_counter() - t0:.1f} s")
        del timers
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return sample_rows, summary_rows, notes


# --- the whole run -------------------------------------------------------------------------


STAGES = ("build", "correctness", "timing", "profile")


def start(names: list[str] | None = None, shapes: list[Shape] | None = None, modes=("hot", "cold"),
          cap_s: float = 3.0, rel_ci: float = 0.005, profile: bool = True, check: str = "full",
          backends=DEFAULT_BACKENDS, seed: int = 0, min_samples: int = 50, profile_shapes: str = "distinct",
          peers: list[str] | None = None, knockouts: bool = True, scopes: list[str] | None = None,
          progress=print) -> records.RunRecord:
    """Open a new run record with its environment and parameters; the stages read them back.
    `peers`: peer names (lab.peers.known_names()); default: SDPA under `backends`, flex_attention
    and every registered external peer. Which of them are absent, and why, goes to peers.json.
    `scopes`: per shape, what it is measured with (SCOPES; scopes_from(spec)); default "ladder"."""
    import torch

    from lab.measure import peers as peer_mod, timing
    from lab.kernels import variants

    if not torch.cuda.is_available():
        raise RuntimeError("a run needs a CUDA GPU (torch.cuda.is_available() is False)")
    peer_names = peer_mod.validate_names(peers or peer_mod.default_names(backends))
    rec = records.RunRecord()
    progress(f"run {rec.run_id} -> {rec.dir}")
    rec.write_json("env.json", records.environment())
    _, availability = peer_mod.resolve(peer_names)
    rec.write_json("peers.json", availability)
    for name, st in availability.items():
        if not st["available"]:
            progress(f"  peer {name} absent: {st['reason']}")
    shapes = shapes or shape_set("canonical")
    scopes = list(scopes or ["ladder"] * len(shapes))
    if len(scopes) != len(shapes) or not set(scopes) <= set(SCOPES):
        raise ValueError(f"scopes must give one of {SCOPES} per shape ({len(shapes)}), not {scopes!r}")
    rec.write_json("params.json", dict(variants=names or variants.names(),
                                       shapes=[[s.B, s.H, s.S, s.D, s.causal] for s in shapes], shape_scopes=scopes,
                                       modes=list(modes), cap_s=cap_s, rel_ci=rel_ci, min_samples=min_samples,
                                       profile=profile, profile_shapes=profile_shapes, check=check,
                                       backends=peer_mod.sdpa_backends(peer_names), peers=peer_names, seed=seed,
                                       knockouts=bool(knockouts),
                                       stop_guard=[timing.StopRule.guard_confidence, timing.StopRule.guard_factor]))
    rec.write_json("stages.json", {})
    return rec


def _params(rec):
    p = rec.read_json("params.json")
    p["shapes"] = [Shape(*s) for s in p["shapes"]]
    return p


def _timed_stage(rec, name, fn, progress):
    t0 = time.perf_counter()
    progress(f"[{name}]")
    try:
        return fn()
    except BaseException as exc:
        rec.finish("incomplete", error=f"stage {name}: " + "".join(traceback.format_exception_only(exc)).strip())
        raise
    finally:
        stages = rec.read_json("stages.json")
        stages[f"{name}_s"] = round(time.perf_counter() - t0, 1)
        rec.write_json("stages.json", stages)


def knockout_configs(p: dict) -> dict[str, tuple[str, dict, str]]:
    """The run's knock-out configurations, impl -> (kernel, defines, applies_to); none when the
    run's `knockouts` parameter is off (runs recorded before it existed had none)."""
    from lab.kernels import switches

    return switches.run_configs(p["variants"]) if p.get("knockouts", False) else {}


def applies(applies_to: str, shape: Shape) -> bool:
    from lab.kernels import switches

    return switches.applies(applies_to, shape.D)


def _kernels(rec):
    """The variants and knock-outs that built and passed correctness, loaded from their cached builds."""
    from lab.kernels import build

    excluded = rec.read_json("excluded.json") if rec.has("excluded.json") else {}
    p = _params(rec)
    names = [n for n in p["variants"] if n not in excluded]
    configs = {i: (k, d) for i, (k, d, _) in knockout_configs(p).items() if i not in excluded}
    built = build.build_all(names, progress=lambda s: None, configs=configs)
    return {n: r.load() for n, r in built.items() if r.ok}


def _peers(rec) -> list:
    """The run's peers that are importable and were not excluded by the correctness stage. Runs
    recorded before peers.json timed SDPA under params["backends"] only."""
    from lab.measure import peers as peer_mod

    p = _params(rec)
    if "peers" not in p:
        return peer_mod.peers(p["backends"])
    status = rec.read_json("peers.json") if rec.has("peers.json") else {}
    found, _ = peer_mod.resolve(p["peers"])
    return [peer for peer in found if not status.get(peer.name, {}).get("excluded")]


def check_peers(rec, progress=print) -> list:
    """The non-SDPA peers on lab.check.peer_grid(), by the variants' rule; a peer that fails a case
    (or that no case could run) is excluded from timing, with the reason in peers.json."""
    from lab.measure import check as checks

    peers = [peer for peer in _peers(rec) if not peer.name.startswith("sdpa_")]
    if not peers:
        return []
    results = list(checks.run_grid({peer.name: checks.peer_as_attn(peer) for peer in peers}, checks.peer_grid(),
                                   progress=progress))
    rec.write_json("peer_correctness.json", checks.as_records(results))
    status = rec.read_json("peers.json")
    for peer in peers:
        mine = [r for r in results if r.variant == peer.name]
        failed = [r for r in mine if not r.passed and not r.unsupported]
        ran = [r for r in mine if not r.unsupported]
        if failed:
            status[peer.name]["excluded"] = f"failed {len(failed)} correctness cases, e.g. {failed[0].explain()}"
        elif not ran:
            status[peer.name]["excluded"] = f"no correctness case could run, e.g. {mine[0].explain()}"
        status[peer.name]["correctness"] = f"{sum(r.passed for r in mine)}/{len(ran)} passed, " \
                                           f"{len(mine) - len(ran)} unsupported"
        progress(f"  peer {peer.name}: {status[peer.name]['correctness']}"
                 + (f"; excluded: {status[peer.name]['excluded']}" if "excluded" in status[peer.name] else ""))
    rec.write_json("peers.json", status)
    return results


def stage_build(rec, progress=print) -> dict:
    from lab.kernels import build

    def body():
        p = _params(rec)
        configs = {i: (k, d) for i, (k, d, _) in knockout_configs(p).items()}
        built = build.build_all(p["variants"], progress=progress, configs=configs)
        rec.write_json("build.json", {n: {**r.summary(), "error": r.log if not r.ok else ""} for n, r in built.items()})
        rec.write_json("excluded.json", {n: r.log if r.log.startswith("not built") else "build failed: " + r.log[:2000]
                                        for n, r in built.items() if not r.ok})
        return built

    return _timed_stage(rec, "build", body, progress)


def stage_correctness(rec, progress=print) -> list:
    from lab.measure import check as checks

    def body():
        mode = _params(rec)["check"]
        excluded = rec.read_json("excluded.json")
        if mode == "none":
            if rec.has("peers.json"):  # said, not silent: the peers are timed unchecked too
                rec.write_json("peers.json", {n: {**st, "correctness": "not checked (check=none)"}
                                              for n, st in rec.read_json("peers.json").items()})
            return []
        kernels = _kernels(rec)
        cases = checks.grid() if mode == "full" else checks.small_grid()
        results = list(checks.run_grid(kernels, cases, progress=progress))
        rec.write_json("correctness.json", checks.as_records(results))
        for n in kernels:
            failed = [r for r in results if r.variant == n and not r.passed]
            if failed:
                excluded[n] = f"failed {len(failed)} correctness cases, e.g. {failed[0].explain()}"
        rec.write_json("excluded.json", excluded)
        progress(f"  {len(results)} checks, {sum(r.passed for r in results)} passed")
        return results + check_peers(rec, progress)

    return _timed_stage(rec, "correctness", body, progress)


def stage_timing(rec, progress=print) -> None:
    """Ceilings, then every shape with every implementation, then the cross-validation."""
    import pandas as pd

    from lab.measure import peers as peer_mod, timing
    from lab.kernels.manifest import branch_ends, headline_end

    def body():
        p = _params(rec)
        try:
            from lab.measure import profile as prof

            rec.write_json("ceilings.json", prof.measure_ceilings())
        except Exception as exc:  # noqa: BLE001 - recorded; the report says the ceiling is missing
            rec.write_json("ceilings.json", {"error": f"{type(exc).__name__}: {exc}"})
        kernels = _kernels(rec)
        shapes, modes = p["shapes"], p["modes"]
        peers = _peers(rec)
        progress(f"  {len(shapes)} shapes x {len(kernels)} variants + peers {[peer.name for peer in peers]}, "
                 f"modes {modes}")
        # Runs recorded before min_samples was a parameter used StopRule's old minimum, 20, and
        # before stop_guard, no guard.
        guard_confidence, guard_factor = p.get("stop_guard") or (None, 2.0)
        rule = timing.StopRule(rel_ci=p["rel_ci"], cap_s=p["cap_s"], min_samples=p.get("min_samples", 20),
                               guard_confidence=guard_confidence, guard_factor=guard_factor)
        clocks = records.Clocks()
        variant_names = [n for n in kernels if n in p["variants"]]
        aa = headline_end(variant_names) or None
        ko_applies = {i: a for i, (_, _, a) in knockout_configs(p).items()}
        all_samples, all_summary, notes = [], [], []
        scopes = shape_scopes(p)
        tails = set(branch_ends(variant_names))
        for i, shape in enumerate(shapes, 1):
            scope = scopes[shape]
            progress(f"  shape {i}/{len(shapes)} {shape} ({scope})")
            if scope == "ladder":  # a knock-out only where its switch changes the kernel (applies_to)
                here = {n: k for n, k in kernels.items() if n not in ko_applies or applies(ko_applies[n], shape)}
            else:
                here = {n: k for n, k in kernels.items() if n in tails}
            s_rows, m_rows, note = measure_shape(shape, here, peers, ["hot"] if scope == "tails-hot" else modes,
                                                 rule, clocks, rec.run_id, aa if scope == "ladder" else None,
                                                 p["seed"] + i, progress)
            note["scope"] = scope
            all_samples += s_rows
            all_summary += m_rows
            notes.append(note)
            rec.write_table("samples.parquet", pd.DataFrame(all_samples, columns=records.SAMPLE_COLUMNS))
            rec.write_table("summary.csv", pd.DataFrame(all_summary, columns=records.SUMMARY_COLUMNS))
            rec.write_json("shapes.json", notes)
        rec.write_json("crossval.json", [cross_validate(shape, peer_mod.SdpaPeer("flash")) for shape in shapes
                                          if scopes[shape] == "ladder"])

    _timed_stage(rec, "timing", body, progress)
    if _params(rec).get("knockouts", False):
        _timed_stage(rec, "factorial", lambda: factorial_stage(rec, progress), progress)


def factorial_stage(rec, progress=print) -> None:
    """The 2^4 factorial of lab.factorial for the kernel of the run that declares switches."""
    from lab.studies import factorial

    p = _params(rec)
    with_switches = {k for k, _, _ in knockout_configs(p).values()}
    kernels = [v for v in p["variants"] if v in with_switches]
    if not kernels:
        rec.write_json("factorial.json", {"ok": False, "reason": "no variant of this run declares switches"})
        return
    from lab.kernels.manifest import headline_end

    factorial.run(rec, headline_end(kernels), progress)  # ftz_exp2 on Hopper, else the portable end


def stage_profile(rec, progress=print) -> None:
    def body():
        p = _params(rec)
        if not p["profile"]:
            rec.write_json("profile_status.json", {"ok": False, "reason": "profiling turned off for this run"})
            progress("  skipped (profile off)")
            return
        # the ladder's shapes: the long and sweep shapes are timed for the bar and the figure only
        ladder = [s for s, scope in shape_scopes(p).items() if scope == "ladder"]
        shapes = shapes_to_profile(ladder, p.get("profile_shapes", "distinct"))
        timed = [peer.name for peer in _peers(rec)]
        peers = [n for n in timed if n in PROFILED_PEERS]
        not_profiled = {n: NOT_PROFILED_REASON for n in timed if n not in PROFILED_PEERS}
        progress(f"  {len(shapes)} shapes x {len(_kernels(rec)) + len(peers)} implementations")
        ko_applies = {i: a for i, (_, _, a) in knockout_configs(p).items()}
        # knock-outs: where their switch changes the kernel, at one shape per (S, D) (the time a run may take)
        ko_shapes = set(profile_shapes(ladder))

        def where(impl: str, shape: Shape) -> bool:
            return impl not in ko_applies or (applies(ko_applies[impl], shape) and shape in ko_shapes)

        profile_run(rec, list(_kernels(rec)), shapes, peers, progress, not_profiled=not_profiled, where=where)

    return _timed_stage(rec, "profile", body, progress)


def finish(rec) -> None:
    stages = rec.read_json("stages.json")
    stages["total_s"] = round(sum(v for k, v in stages.items() if k.endswith("_s") and k != "total_s"), 1)
    rec.write_json("stages.json", stages)
    rec.finish("complete", stages=stages)


def run(progress=print, **params) -> records.RunRecord:
    """Every stage in order (what the notebooks do one by one)."""
    rec = start(progress=progress, **params)
    stage_build(rec, progress)
    stage_correctness(rec, progress)
    stage_timing(rec, progress)
    stage_profile(rec, progress)
    finish(rec)
    return rec


CROSSVAL_ROUNDS = 5


def cross_validate(shape: Shape, peer, rounds: int = CROSSVAL_ROUNDS) -> dict:
    """SDPA's hot median from this harness next to triton.testing.do_bench_cudagraph's, both on
    one input set, so a bias in the harness shows up as a ratio away from 1. The two alternate
    over `rounds` rounds (10 harness samples, then one 50 ms triton measurement), so a clock or
    power drift during the comparison falls on both alike; each side's value is its median."""
    import statistics

    import torch

    from lab.measure import timing

    out = {"shape": shape.id, "impl": peer.name}
    try:
        q, k, v = (torch.randn(shape.B, shape.H, shape.S, shape.D, device="cuda", dtype=torch.float16)
                   for _ in range(3))
        if reason := peer.unsupported_reason(q, k, v, shape.causal, None):
            return {**out, "error": reason}
        launch = peer.bind(q, k, v, shape.causal, None)
        with peer.context():
            from triton.testing import do_bench_cudagraph

            timer = timing.HotTimer(launch)
            harness_rounds, triton_rounds = [], []
            for _ in range(rounds):
                harness_rounds.append(timer.samples(10))
                triton_rounds.append(do_bench_cudagraph(launch, rep=50, return_mode="median") * 1e3)
        harness = statistics.median(x for r in harness_rounds for x in r)
        triton_us = statistics.median(triton_rounds)
        return {**out, "harness_us": harness, "triton_us": triton_us, "ratio": harness / triton_us,
                "harness_round_medians_us": [statistics.median(r) for r in harness_rounds],
                "triton_round_medians_us": triton_rounds}
    except Exception as exc:  # noqa: BLE001 - a missing triton is recorded, not fatal
        return {**out, "error": f"{type(exc).__name__}: {exc}"}


# SDPA's default backend is cuDNN on the H100/H200 and "efficient" is never the fastest: profiling
# flash and cuDNN covers the SDPA peers the report compares against. flex_attention is profiled
# too: its profiling process compiles it (from the inductor cache the timing stage filled) before
# the profiled launch, which lab.profile's timeout bounds.
PROFILED_BACKENDS = ("flash", "cudnn")
PROFILED_PEERS = tuple(f"sdpa_{b}" for b in PROFILED_BACKENDS) + ("flex_attention",)
NOT_PROFILED_REASON = ("not profiled: only " + ", ".join(PROFILED_PEERS) + " are (lab.run.PROFILED_PEERS), "
                       "to keep the profile stage within a run's time")


def shapes_to_profile(shapes: list[Shape], which: str = "all") -> list[Shape]:
    """The run's shapes to profile: "all" of them, or "distinct": one per (S, D) (runs recorded
    before the parameter existed profiled that way)."""
    if which == "all":
        return list(shapes)
    if which == "distinct":
        return profile_shapes(shapes)
    raise ValueError(f"profile_shapes must be 'all' or 'distinct', not {which!r}")


def profile_shapes(shapes: list[Shape]) -> list[Shape]:
    """One launch per implementation for each distinct (S, D), non-causal where there is one: the
    cheaper choice where profiling every shape would not fit the time a run may take. The report
    says which shapes were profiled."""
    chosen: dict = {}
    for s in sorted(shapes, key=lambda s: (s.causal, -s.B * s.H)):
        chosen.setdefault((s.S, s.D), s)
    return list(chosen.values())


def profile_run(rec, names, shapes, peer_names, progress=print, not_profiled: dict | None = None,
                where=None) -> None:
    """Nsight Compute over one launch per (impl, shape); a refusal is recorded, never fatal.
    `not_profiled`: timed peers left out on purpose, {name: why}, kept in profile_status.json.
    `where(impl, shape)`: whether to profile a kernel there (default: everywhere)."""
    import pandas as pd

    try:
        from lab.measure import profile as prof
    except ImportError as exc:
        rec.write_json("profile_status.json", {"ok": False, "reason": f"lab.profile unavailable: {exc}"})
        return
    out = rec.path("ncu")
    out.mkdir(exist_ok=True)
    rows, all_names = [], list(names)
    for shape in shapes:
        here = [n for n in all_names if where is None or where(n, shape)]
        dims = (shape.B, shape.H, shape.S, shape.D)
        together = prof.profile_variants(list(here), dims, shape.causal, out)
        if together is None and here:
            progress(f"  profile {shape}: the variants did not profile together; one by one instead")
        for res in together or []:
            rows.append(res.to_record())
            if not res.ok:
                progress(f"  profile {res.impl} {shape}: skipped ({res.reason})")
        for impl in [*([] if together is not None else here), *peer_names]:
            res = prof.profile_impl(impl, dims, shape.causal, out)
            rows.append(res.to_record())
            if not res.ok:
                progress(f"  profile {impl} {shape}: skipped ({res.reason})")
                if "ncu" in (res.reason or "") and ("not found" in res.reason or "permission" in res.reason.lower()):
                    rec.write_json("profile_status.json", {"ok": False, "reason": res.reason,
                                                           "not_profiled": not_profiled or {}})
                    rec.write_table("profile.csv", pd.DataFrame(rows))
                    return
        rec.write_table("profile.csv", pd.DataFrame(rows))
        progress(f"  profiled {shape}")
    rec.write_json("profile_status.json", {"ok": True, "not_profiled": not_profiled or {}})


# --- printing and comparing ----------------------------------------------------------------


def summary_table(rec: records.RunRecord, mode: str = "hot", peer: str = "sdpa_flash") -> str:
    """Per shape: each impl's median, TFLOP/s, and speedup over `peer` with its 95% interval."""
    from lab.measure import stats

    summ = rec.read_table("summary.csv")
    samples = rec.read_table("samples.parquet")
    samples = samples[~samples["throttled"].astype(bool)]
    lines = []
    keys = ["B", "H", "S", "D", "causal"]
    for shape_key, block in summ[summ["mode"] == mode].groupby(keys, sort=False):
        lines.append(f"\n({', '.join(str(v) for v in shape_key[:4])}) {'causal' if shape_key[4] else 'non-causal'}"
                     f" [{mode}]")
        lines.append(f"  {'impl':<24} {'median us':>10} {'p10-p90 us':>18} {'TFLOP/s':>8} {'vs ' + peer:>28}")
        sel = samples[(samples["mode"] == mode)]
        for col, val in zip(keys, shape_key):
            sel = sel[sel[col] == val]
        base = sel[sel["impl"] == peer]["latency_us"].to_numpy()
        for _, row in block.iterrows():
            rel = ""
            if len(base) and row["impl"] != peer:
                ci = stats.speedup_ci(sel[sel["impl"] == row["impl"]]["latency_us"].to_numpy(), base)
                rel = f"{ci.ratio:6.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]"
            lines.append(f"  {row['impl']:<24} {row['median_us']:>10.2f} {row['p10_us']:>8.2f}-{row['p90_us']:<9.2f}"
                         f" {row['tflops']:>8.1f} {rel:>28}")
    return "\n".join(lines)


def best_base(run_id: str) -> str | None:
    """The earlier complete run on the same GPU model with the lowest geometric-mean median over
    the rows it shares with `run_id` (the bar a new run has to clear)."""
    import numpy as np

    rec = records.RunRecord.open(run_id)
    gpu = rec.read_json("env.json").get("gpu")
    cur = rec.read_table("summary.csv").set_index(["impl", "B", "H", "S", "D", "causal", "mode"])["median_us"]
    best, best_score = None, math.inf
    for other in records.list_runs():
        if other >= run_id:
            continue
        o = records.RunRecord.open(other)
        if o.status.get("state") != "complete" or not o.has("summary.csv") or o.read_json("env.json").get("gpu") != gpu:
            continue
        prev = o.read_table("summary.csv").set_index(cur.index.names)["median_us"]
        common = cur.index.intersection(prev.index)
        if len(common) == 0:
            continue
        score = float(np.exp(np.log(prev.loc[common]).mean() - np.log(cur.loc[common]).mean()))
        if score < best_score:
            best, best_score = other, score
    return best


def compare(run_id: str, base_id: str | None = None, threshold: float = 0.02, progress=print) -> int:
    """Speedups of RUN over BASE per (impl, shape, mode), with intervals; returns the exit code:
    1 when a variant failed correctness in RUN or is significantly slower by more than threshold."""
    from lab.measure import peers as peer_mod, stats

    rec = records.RunRecord.open(run_id)
    failures = [c for c in (rec.read_json("correctness.json") if rec.has("correctness.json") else [])
                if not c["passed"]]
    base_id = base_id or best_base(run_id)
    if base_id is None:
        progress(f"no earlier complete run on the same GPU to compare {run_id} with")
        return 1 if failures else 0
    base = records.RunRecord.open(base_id)
    progress(f"comparing {run_id} against {base_id} (ratio > 1: {run_id} faster)")
    a, b = rec.read_table("samples.parquet"), base.read_table("samples.parquet")
    a, b = a[~a["throttled"].astype(bool)], b[~b["throttled"].astype(bool)]
    keys = ["impl", "B", "H", "S", "D", "causal", "mode"]
    pairs, labels = [], []
    for key, grp in a.groupby(keys):
        other = b
        for col, val in zip(keys, key):
            other = other[other[col] == val]
        if len(other):
            pairs.append((grp["latency_us"].to_numpy(), other["latency_us"].to_numpy()))
            labels.append(key)
    rows = stats.compare_rows(pairs)
    regressions = []
    for key, cmp in zip(labels, rows):
        verdict = cmp.verdict()
        progress(f"  {key[0]:<24} ({key[1]},{key[2]},{key[3]},{key[4]}) {'causal' if key[5] else 'full':<6} {key[6]:<4}"
                 f" {cmp.speedup.ratio:6.3f}x [{cmp.speedup.lo:.3f}, {cmp.speedup.hi:.3f}] {verdict}")
        is_variant = not peer_mod.is_peer(key[0]) and not key[0].endswith(AA_SUFFIX)
        if is_variant and verdict == "slower" and cmp.speedup.ratio < 1 - threshold:
            regressions.append(key)
    for f in failures:
        progress(f"  correctness FAILED: {f['variant']} {f['case']}")
    if regressions:
        progress(f"{len(regressions)} significant regressions beyond {threshold:.0%}")
    return 1 if failures or regressions else 0
