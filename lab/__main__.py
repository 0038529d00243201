"""Command line: python -m lab {build,check,bench,sanitize,run,tune,compare,replicate} ..."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from lab.cli import OneLineParser, fraction, positive, refuse
from lab.kernels.shape import Shape
from lab.studies.params import RunParams, TuneParams, add_run_options, add_tune_options
from lab.studies.shapes import HEADLINE


def _names(arg: str | None) -> list[str]:
    from lab.kernels import variants

    if not arg:
        return variants.names()
    from lab.kernels import switches
    from lab.measure import peers

    names = arg.split(",")
    for n in names:
        if peers.is_peer(n):
            raise ValueError(f"{n!r} is a peer, not a step: `bench` times the peers beside the steps (--peers), "
                             "a run through its PEERS")
        switches.impl_config(n)  # a variant or a knock-out (kernel~no_switch); unknown names fail here, naming the known
    return names


def _configs(names: list[str]) -> dict:
    """The knock-out configurations among `names`: impl -> (kernel, defines), as build.build_all takes them."""
    from lab.kernels import switches

    return {n: switches.impl_config(n) for n in names if switches.parse_impl(n)}


def _require_gpu() -> None:
    import torch

    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible: this command needs one (torch.cuda.is_available() is False)")


def _load_built(names: list[str]) -> tuple[dict, dict]:
    """Build (or reuse) the named variants; returns (callables, failures). Never raises."""
    from lab.kernels import build

    print(f"building {len(names)} variants ...", flush=True)
    t0 = time.perf_counter()
    configs = _configs(names)
    results = build.build_all([n for n in names if n not in configs], configs=configs)
    print(f"build done in {time.perf_counter() - t0:.1f} s", flush=True)
    kernels, failures = {}, {}
    for name, r in results.items():
        if r.ok:
            kernels[name] = r.load()
        else:
            failures[name] = r.log
            print(f"  {name} FAILED to compile:\n{r.log}", file=sys.stderr)
    return kernels, failures


def cmd_build(args) -> int:
    from lab.kernels import build

    if args.arch is None:
        _require_gpu()
    names = _names(args.variants)
    configs = _configs(names)
    results = build.build_all([n for n in names if n not in configs], configs=configs, arch=args.arch, force=args.force)
    print(f"\n{'variant':<18} {'D':>4} {'regs':>5} {'spill st/ld':>12} {'stack':>6} {'dyn smem':>9} {'threads':>8}")
    for r in results.values():
        for k in sorted(r.ptxas, key=lambda k: k["head_dim"] or 0):
            launch = r.launch.get(str(k["head_dim"]), {})
            print(f"{r.name:<18} {k['head_dim']:>4} {k['registers']:>5} "
                  f"{k['spill_stores']:>5}/{k['spill_loads']:<6} {k['stack_frame']:>6} "
                  f"{launch.get('dynamic_smem', '-'):>9} {launch.get('threads', '-'):>8}")
    failed = [r for r in results.values() if not r.ok]
    for r in failed:
        print(f"\n{r.name} failed to compile:\n{r.log}", file=sys.stderr)
    return 1 if failed else 0


def cmd_check(args) -> int:
    from lab.measure import check

    _require_gpu()
    kernels, failures = _load_built(_names(args.variants))
    cases = check.small_grid() if args.quick else check.grid()
    print(f"checking {len(kernels)} variants on {len(cases)} cases ...", flush=True)
    t0 = time.perf_counter()
    results = list(check.run_grid(kernels, cases, progress=lambda s: print(s, flush=True)))
    print(f"done in {time.perf_counter() - t0:.1f} s\n")
    print(f"{'variant':<18} {'passed':>9} {'not taken':>9} {'worst err/tol':>14} {'worst case':<32}")
    for name in kernels:
        mine = [r for r in results if r.variant == name]
        rows = [r for r in mine if not r.unsupported]  # the cases it takes (bf16, grouped K/V heads: where declared)
        if not rows:
            print(f"{name:<18} {'0/0':>9} {len(mine):>9}")
            continue
        worst = max(rows, key=lambda r: (r.max_abs_err / r.tolerance) if r.finite else float("inf"))
        ratio = worst.max_abs_err / worst.tolerance if worst.finite else float("inf")
        print(f"{name:<18} {sum(r.passed for r in rows):>4}/{len(rows):<4} {len(mine) - len(rows):>9} "
              f"{ratio:>14.3f} {worst.case:<32}")
    for name in failures:
        print(f"{name:<18} {'build failed':>9}")
    counts = check.counts(results)
    print("\nper dtype and head layout: " + "; ".join(
        f"{d} {layout}: {c['passed']}/{c['cases']} passed, {c['not_taken']} not taken"
        for (d, layout), c in sorted(counts.items())))
    if args.out:
        Path(args.out).write_text(json.dumps(check.as_records(results), indent=1))
    return 0 if not failures and not any(r.failed for r in results) else 1


def cmd_bench(args) -> int:
    """A first read of speed: the variants next to the peers (SDPA's backends, flex_attention, the
    importable external peers) at one shape, hot, through the run's own timing path
    (lab.studies.measure_shape) with a short stopping rule."""
    import torch

    from lab.measure import peers, timing
    from lab.measure.clocks import Clocks
    from lab.studies.measure_shape import measure_shape

    _require_gpu()
    try:
        shape = Shape.parse(args.shape)
    except ValueError as exc:
        sys.exit(f"--shape: {exc}")
    kernels, _ = _load_built(_names(args.variants))
    found, status = peers.resolve(args.peers.split(",") if args.peers else peers.default_names())
    rule = timing.StopRule(rel_ci=0.005, cap_s=args.cap, min_samples=args.samples)
    samples, summary, notes = measure_shape(shape, kernels, found, ("hot",), rule, Clocks(), "bench", None, 0,
                                            progress=lambda s: None)
    print(f"\n{shape}, hot (CUDA graph), {torch.cuda.get_device_name()}; each row stopped by the run's rule "
          f"(at least {args.samples} samples, at most {args.cap:g} s)")
    print(f"{'impl':<18} {'median us':>10} {'TFLOP/s':>8} {'n':>6}")
    for row in summary:
        print(f"{row['impl']:<18} {row['median_us']:>10.1f} {row['tflops']:>8.1f} {row['n']:>6}")
    for name, st in status.items():
        if not st["available"]:
            print(f"{name:<18} absent: {st['reason']}")
    for name, why in {**notes["unsupported"], **notes["errors"]}.items():
        print(f"{name:<18} unsupported: {why}")
    for name, why in notes.get("not_taken", {}).items():
        print(f"{name:<18} not taken: {why}")
    if args.out:
        Path(args.out).write_text(json.dumps({"shape": shape.astuple(), "summary": summary, "samples": samples},
                                             default=str))
    return 0


def cmd_sanitize(args) -> int:
    from lab.kernels import manifest
    from lab.measure import sanitize

    _require_gpu()
    names = _names(args.variants) if args.variants else manifest.names(problem=None)  # the decode steps too
    _load_built(names)  # build outside the sanitizer
    print(f"compute-sanitizer over {len(names)} variants, shapes {sanitize.SHAPES} and, for the variants that take "
          f"them, {', '.join(s.spec for s in sanitize.MODEL_SHAPES)}; the decode steps on their correctness grid",
          flush=True)
    results = sanitize.run(names, tools=args.tools.split(","))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    dirty = [t for t, r in results.items() if not r["clean"]]
    for t in dirty:
        print(f"\n--- {t} ---\n{results[t]['log'][-6000:]}", file=sys.stderr)
    return 1 if dirty else 0


def _params_or_exit(params_class, args):
    """params_class.from_args(args) (RunParams, TuneParams), or exit with its one line of why not."""
    try:
        return params_class.from_args(args)
    except ValueError as exc:
        sys.exit(str(exc))


def cmd_run(args) -> int:
    from lab.report.console import summary_table
    from lab.studies import stages

    params = _params_or_exit(RunParams, args)
    _require_gpu()
    rec = stages.run(params)
    for mode in params.modes:
        print(summary_table(rec, mode=mode))
    times = rec.status.get("stages", {})
    print("\nstages: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()))
    print(f"run record: {rec.dir}")
    excluded = rec.read_json("excluded.json")
    for name, why in excluded.items():
        print(f"excluded {name}: {why}")
    return 1 if excluded else 0


def cmd_tune(args) -> int:
    """A tuning run (lab.studies.tuning), then its report section (lab.report.tuning)."""
    from lab.report import tuning as tuning_report
    from lab.studies.tuning import run as tuning

    p = _params_or_exit(TuneParams, args)
    rec = tuning.tune(p)
    out = tuning_report.write(rec.dir, tuning.FAKE_DIR / "reports" / rec.run_id if p.fake else None)
    print(f"tuning run record: {rec.dir}\nreport section: {out}")
    return 0


def cmd_compare(args) -> int:
    from lab.measure import records
    from lab.studies.compare import compare

    run_id = args.run or records.latest_run()
    if run_id is None:
        print("no complete run under data/runs to compare", file=sys.stderr)
        return 1
    return compare(run_id, args.base, threshold=args.threshold)


def cmd_replicate(args) -> int:
    """Every step, knock-out and bar row of RUN beside BASE: effect, interval, verdict in each."""
    from lab.report import replication

    return replication.main(args.run, args.base)


def parser() -> argparse.ArgumentParser:
    ap = OneLineParser(prog="python -m lab", description="FlashAttention kernel ablation study")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    p = sub.add_parser("build", help="build every variant (cached), print the ptxas resource report")
    p.add_argument("--variants", help="comma-separated names (default: all)")
    p.add_argument("--arch", help="e.g. 9.0; default: the GPU's")
    p.add_argument("--force", action="store_true", help="rebuild even if a cached build matches")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("check", help="correctness of every variant against the fp32 reference")
    p.add_argument("--variants")
    p.add_argument("--quick", action="store_true", help="a small subset (lab.measure.check.small_grid) instead of "
                   "the full grid")
    p.add_argument("--out", help="write every case's result as JSON here")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("bench", help="first read of speed: hot-mode medians next to the peers at one shape")
    p.add_argument("--variants")
    p.add_argument("--shape", default=HEADLINE.spec, help=f"B,H,S,D[,causal][,kvN][,fp16|bf16] (default "
                   f"{HEADLINE.spec}: the headline)")
    p.add_argument("--samples", type=positive(int), default=30, help="at least this many samples per implementation")
    p.add_argument("--cap", type=positive(float), default=1.0, help="at most this many s per implementation")
    p.add_argument("--peers", help="comma-separated peers (lab.measure.peers.known_names()); default: SDPA's "
                   "backends, flex_attention and every importable external peer")
    p.add_argument("--out", help="write the summary and the raw samples as JSON here")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("sanitize", help="compute-sanitizer over every variant on a few small shapes "
                       "(bf16 and grouped-query ones for the variants that take them), the decode steps on "
                       "their correctness grid")
    p.add_argument("--variants")
    p.add_argument("--tools", default=",".join(("memcheck", "racecheck", "synccheck", "initcheck")))
    p.add_argument("--out", help="write the sanitizer logs as JSON here")
    p.set_defaults(func=cmd_sanitize)

    p = sub.add_parser("run", help="a measurement run: build, check, time, profile -> data/runs/<run_id>/ "
                       "(the options and defaults of make ablation: lab.studies.params)")
    add_run_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("tune", help="search a kernel's tile constants on every GPU -> data/tuning/<run_id>/")
    add_tune_options(p)
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser("compare", help="speedups between two runs; non-zero exit on a regression")
    p.add_argument("run", nargs="?", help="run id (default: the latest complete run: the one just measured)")
    p.add_argument("base", nargs="?", help="base run id (default: the best earlier run on the same GPU)")
    p.add_argument("--threshold", type=fraction, default=0.02, help="a variant significantly slower by more than "
                   "this fraction is a regression (0.02: 2 %%; strictly between 0 and 1)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("replicate", help="does it replicate? every step, knock-out and bar row of RUN beside BASE "
                       "(another GPU, or the same again): each run's effect, interval and verdict")
    p.add_argument("run", help="run id")
    p.add_argument("base", help="the run to replicate against")
    p.set_defaults(func=cmd_replicate)

    return ap


def bad_input(args) -> str | None:
    """What in `args` a command cannot take, named with the constraint, before anything runs; or None."""
    from lab.measure import sanitize
    from lab.measure import records

    if getattr(args, "variants", None):
        try:
            _names(args.variants)
        except (KeyError, ValueError) as exc:  # manifest.get's KeyError names the known variants
            return f"--variants {args.variants}: {exc.args[0]}"
    if args.command == "bench" and args.peers:
        from lab.measure import peers

        try:
            peers.validate_names(args.peers.split(","))
        except ValueError as exc:
            return f"--peers {args.peers}: {exc.args[0]}"
    if getattr(args, "shape", None):
        try:
            Shape.parse(args.shape)
        except ValueError as exc:
            return f"--shape: {exc}"
    if getattr(args, "tools", None):
        unknown = sorted(set(args.tools.split(",")) - set(sanitize.TOOLS))
        if unknown:
            return f"--tools {args.tools}: unknown tool(s) {', '.join(unknown)}; known: {', '.join(sanitize.TOOLS)}"
    if args.command in ("compare", "replicate"):
        for what in ("run", "base"):
            rid = getattr(args, what)
            if rid and rid not in records.list_runs():
                return f"{what} {rid!r}: no such run under {records.RUNS_DIR}"
    if args.command == "run":
        try:
            RunParams.from_args(args)
        except ValueError as exc:
            return str(exc)
    if args.command == "tune":
        try:
            TuneParams.from_args(args)
        except ValueError as exc:
            return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if problem := bad_input(args):
        refuse(f"{ap.prog} {args.command}", problem)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
