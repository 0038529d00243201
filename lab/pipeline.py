"""`make ablation`: run the numbered notebooks with papermill for one new run id, then write the
report. Executed notebooks are kept in the run's folder, `data/runs/<run_id>/notebooks/`.

A failing stage stops the pipeline with the failing cell's error and where to read the executed
notebook; a failing variant inside a stage is recorded by that stage and the others go on. On a
machine without a CUDA GPU nothing is measured: the committed report is rebuilt from its own run
(lab.report.committed), which leaves the tree as it was, and a parameter that only a new run could use
is refused with one line.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab import jupyter_kernel
from lab.cli import OneLineParser
from lab.kernels.manifest import REPO
from lab.studies import resume, stages
from lab.studies.params import RunParams, add_run_options

NOTEBOOKS_DIR = REPO / "notebooks"
MEASURE = ["00_environment.ipynb", *(f"{i:02d}_{name}.ipynb" for i, name in enumerate(stages.STAGES, 1))]
REPORT = "05_report.ipynb"


class ProgressBar:
    """On a terminal: where the stage is (lab.progress, written by the stage's own processes) as a bar
    with elapsed time and an ETA, redrawn from a thread; the notebook's lines are written above it.
    Not a terminal (CI logs, a file): nothing is drawn and the lines pass through as they are.
    `expected`: {stage: seconds} of a comparable recorded run (lab.studies.stages.comparable_stage_seconds)."""

    def __init__(self, run_id: str, expected: dict | None = None, stream=None, interval_s: float = 0.5,
                 enabled: bool | None = None):
        self.run_id, self.expected, self.interval_s = run_id, expected or {}, interval_s
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.bar, self.stage, self.t0 = None, None, time.perf_counter()
        self._stop = None

    def line(self, pos: dict, now: float) -> str:
        """The bar's text after its counts: elapsed, ETA and what is under way."""
        from lab import progress

        eta = progress.eta_s(now - self.t0, pos["done"], pos["total"], self.expected.get(pos["stage"]))
        basis = "from a comparable run" if pos["stage"] in self.expected else "at this stage's rate"
        return f"{progress.clock(now - self.t0)} elapsed, ETA {progress.clock(eta)} ({basis}) {pos.get('what', '')}"

    def _draw(self) -> None:
        from tqdm import tqdm

        from lab import progress

        pos = progress.read(self.run_id)
        if not pos or pos.get("at", 0) < self.started_at:
            return
        if pos["stage"] != self.stage:
            if self.bar is not None:
                self.bar.close()
            self.stage, self.t0 = pos["stage"], time.perf_counter()
            self.bar = tqdm(total=pos["total"], desc=pos["stage"], file=self.stream, dynamic_ncols=True,
                            bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {postfix}")
        self.bar.total, self.bar.n = pos["total"], pos["done"]
        self.bar.set_postfix_str(self.line(pos, time.perf_counter()), refresh=False)
        self.bar.refresh()

    def __enter__(self):
        import threading

        self.started_at = time.time()
        if self.enabled:
            self._stop = threading.Event()

            def loop():
                while not self._stop.wait(self.interval_s):
                    self._draw()

            threading.Thread(target=loop, daemon=True).start()
        return self

    def __exit__(self, *exc):
        if self._stop is not None:
            self._stop.set()
            self._draw()
        if self.bar is not None:
            self.bar.close()

    # papermill's stdout_file: the notebook's output, above the bar
    def write(self, text: str) -> int:
        if self.bar is not None:
            from tqdm import tqdm

            for ln in text.rstrip("\n").split("\n"):
                tqdm.write(ln, file=sys.stdout)
        else:
            sys.stdout.write(text)
        return len(text)

    def flush(self) -> None:
        sys.stdout.flush()


def expected_line(name: str, expected: tuple[str | None, dict]) -> str:
    """What the same stage took in a comparable recorded run, for the stage's first line; '' if none."""
    run_id, seconds = expected
    keys = [k for k in (stage_name(name), *(["factorial"] if name == "03_timing.ipynb" else [])) if k in seconds]
    if not run_id or not keys:
        return ""
    return " (" + ", ".join(f"{k} took {seconds[k]:.0f} s" for k in keys) + f" in run {run_id}, same GPU and parameters)"


def _with_eta(rec):
    """execute, with the stage seconds of the run's comparable recorded run for the progress bar's ETA."""
    return functools.partial(execute, expected=stages.comparable_stage_seconds(rec))


def execute(name: str, out_dir: Path, parameters: dict, expected: tuple[str | None, dict] = (None, {})) -> float:
    """Run one notebook; raises SystemExit with the failing cell's error on failure. `expected`: a
    comparable run's stage seconds (run id, {stage: s}), for the ETA."""
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / name
    t0 = time.perf_counter()
    print(f"== {name} ...{expected_line(name, expected)}", flush=True)
    try:
        with ProgressBar(parameters.get("run_id", ""), expected[1]) as bar:
            pm.execute_notebook(str(NOTEBOOKS_DIR / name), str(out), parameters=parameters, kernel_name="python3",
                                cwd=str(REPO), progress_bar=False, log_output=True, stdout_file=bar,
                                stderr_file=sys.stderr, kernel_manager_class=jupyter_kernel.MANAGER)
    except pm.PapermillExecutionError as exc:
        raise SystemExit(f"\nstage {name} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}\n"
                         f"read the executed notebook: {out}") from None
    seconds = time.perf_counter() - t0
    print(f"== {name} done in {seconds:.0f} s", flush=True)
    return seconds


# flex_attention's compiles for the timing shapes (lab.studies.warm) run in a background process while
# the correctness stage runs, and the timing stage starts once they are done or after this long.
WARM_WAIT_S = 300


class FlexWarmup:
    """The background warm-up of one run: started before the correctness stage where the timing
    stage follows it, waited for before the timing stage; never fails the run (a warm-up that errs
    or overruns is only reported, and the timing compiles what it needs itself)."""

    def __init__(self, run_id: str, popen=None, wait_s: float = WARM_WAIT_S, clock=time.perf_counter):
        self.run_id, self.wait_s, self.proc, self.clock = run_id, wait_s, None, clock
        self.popen = popen or (lambda cmd: subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL,
                                                            stderr=subprocess.DEVNULL))

    def start(self) -> None:
        try:
            self.proc = self.popen([sys.executable, "-m", "lab.studies.warm", self.run_id])
        except OSError as exc:
            print(f"   flex_attention warm-up not started: {exc}", flush=True)

    def join(self) -> float | None:
        """Waits for the warm-up; returns the seconds waited (None where none was started)."""
        if self.proc is None:
            return None
        t0 = self.clock()
        try:
            code = self.proc.wait(timeout=self.wait_s)
            print(f"   flex_attention warm-up done (exit {code})", flush=True)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            print(f"   flex_attention warm-up stopped after {self.wait_s:.0f} s: the timing compiles the rest", flush=True)
        self.proc = None
        return self.clock() - t0


def record_between(rec, key: str, seconds: float) -> None:
    """Wall time a run spent between its stages (a wait no stage's seconds hold), into stages.json's
    `between` ({key: seconds}); not a '<stage>_s' key, so no reader takes it for a stage."""
    stages = rec.read_json("stages.json") if rec.has("stages.json") else {}
    stages.setdefault("between", {})[key] = round(seconds, 1)
    rec.write_json("stages.json", stages)


def run_stages(names: list[str], out_dir: Path, run_id: str, run_notebook=None, warmup=None,
               on_wait=None) -> dict:
    """Execute the measuring notebooks `names` in order (run_notebook: execute); where the correctness
    stage is followed by the timing stage, flex_attention's compiles for the timing run beside the
    correctness stage (FlexWarmup), and the seconds the timing stage waited for them go to
    `on_wait` (default: the run's stages.json, `between`). Returns {notebook: seconds}."""
    from lab.measure.records import RunRecord

    run_notebook = run_notebook or execute

    def record_wait(seconds):
        try:
            record_between(RunRecord.open(run_id), "flex_warmup_wait_s", seconds)
        except (OSError, ValueError) as exc:  # the warm-up never fails a run, nor does its record
            print(f"   the wait for the flex_attention warm-up ({seconds:.1f} s) not recorded: {exc}", flush=True)

    on_wait = on_wait or record_wait
    warm = (warmup or FlexWarmup(run_id)) if {"02_correctness.ipynb", "03_timing.ipynb"} <= set(names) else None
    timings = {}
    for name in names:
        if warm is not None and name == "02_correctness.ipynb":
            warm.start()
        if warm is not None and name == "03_timing.ipynb" and (waited := warm.join()) is not None:
            on_wait(waited)
        timings[name] = run_notebook(name, out_dir, {"run_id": run_id})
    return timings


def stage_name(notebook: str) -> str:
    """'03_timing.ipynb' -> 'timing'."""
    return notebook.split("_", 1)[1].removesuffix(".ipynb")


def remaining(rec, stop_after: str = "") -> list[str]:
    """The measuring notebooks a run still needs, in order, up to and including `stop_after`."""
    done = rec.read_json("stages.json") if rec.has("stages.json") else {}
    knockouts = _has_factorial(rec)
    todo = [nb for nb in MEASURE[1:] if not stages.stage_done(stage_name(nb), done, knockouts, _has_decode(rec))]
    if stop_after:
        names = [stage_name(nb) for nb in MEASURE]
        todo = [nb for nb in todo if names.index(stage_name(nb)) <= names.index(stop_after)]
    return todo


def stages_left(rec, notebooks: list[str]) -> list[str]:
    """What each of `notebooks` (remaining()'s) still runs, as resumes.json records it
    (lab.studies.stages.left_to_run: a timing stage may have only its decode set or factorial left)."""
    done = rec.read_json("stages.json") if rec.has("stages.json") else {}
    return [stages.left_to_run(stage_name(nb), done, _has_factorial(rec), _has_decode(rec)) for nb in notebooks]


def close_if_measured(rec) -> bool:
    """Mark an open run complete once every measuring stage has run (what the report notebook does
    first, for a run measured with --no-report); returns whether it was closed here."""
    if rec.status.get("state") != "running" or remaining(rec):  # no stages.json: every stage remains
        return False
    stages.finish(rec)
    return True


def _has_factorial(rec) -> bool:
    """Whether the run's timing stage ends with the factorial (its knock-outs parameter)."""
    from lab.studies.params import RunParams

    return rec.has("params.json") and RunParams.read(rec).knockouts


def _has_decode(rec) -> bool:
    """Whether the run's timing ends with the decode set (its DECODE names shapes)."""
    from lab.studies.params import RunParams

    return rec.has("params.json") and bool(RunParams.read(rec).decode_shapes)


def validate(args) -> RunParams:
    """Every parameter checked before anything else, GPU or not: the run's RunParams, or a
    ValueError naming the constraint."""
    from lab.measure import records

    params = RunParams.from_args(args)
    if getattr(args, "resume", "") and args.resume not in records.list_runs():
        raise ValueError(f"--resume {args.resume}: no such run under data/runs")
    return params


def parser() -> argparse.ArgumentParser:
    """The pipeline's options: the run's (lab.studies.params.RUN_OPTIONS) and how far to go."""
    ap = OneLineParser(prog="python -m lab.pipeline")
    add_run_options(ap)  # the run's parameters, their defaults from lab.studies.params.RunParams
    ap.add_argument("--reports-dir", default="reports")
    ap.add_argument("--no-report", action="store_true", help="stop after the measuring notebooks")
    ap.add_argument("--stop-after", choices=[stage_name(nb) for nb in MEASURE], default="",
                    help="stop after this stage (no report); go on later with --resume RUN_ID")
    ap.add_argument("--resume", metavar="RUN_ID", default="",
                    help="go on with a recorded run: run the stages it has not done yet, then the report")
    return ap


def given_options(ap: argparse.ArgumentParser, args) -> list[str]:
    """The flags of `args` that differ from the parser's defaults (what the user asked for)."""
    return [a.option_strings[0] for a in ap._actions
            if a.option_strings and a.dest != "help" and getattr(args, a.dest, None) != a.default]


def no_gpu_refusal(ap: argparse.ArgumentParser, args) -> str | None:
    """Without a GPU only the committed report can be rebuilt: every option that shapes a new run (its
    parameters, --resume, --stop-after, --no-report) is refused, by name, rather than dropped."""
    asked = [f for f in given_options(ap, args) if f != "--reports-dir"]
    if not asked:
        return None
    return (f"no CUDA GPU on this machine, so no new run is measured and {', '.join(asked)} cannot be used; "
            f"without them `make ablation` rebuilds the committed report (`make report RUN=<run_id>` another run's)")


def keep_childrens_bytecode(environ=os.environ, repo: Path = REPO) -> str | None:
    """Where PYTHONDONTWRITEBYTECODE is set (container images often set it) every process of a run
    (the notebooks' kernels, each timing replicate, the warm-up) compiled torch's compiler stack
    from source again: 8.7-12.2 s an import on an H100 host, 2.9 s from a bytecode cache
    (data/explorations/2026-11-25-timing-overhead/call7). The run's child processes therefore keep
    their bytecode under build/pycache (PYTHONPYCACHEPREFIX), never beside the installed sources.
    A prefix the user set is kept. Returns the prefix set, or None."""
    if not environ.get("PYTHONDONTWRITEBYTECODE") or environ.get("PYTHONPYCACHEPREFIX"):
        return None
    prefix = str(repo / "build" / "pycache")
    environ.pop("PYTHONDONTWRITEBYTECODE")
    environ["PYTHONPYCACHEPREFIX"] = prefix
    return prefix


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    try:
        params = validate(args)
    except ValueError as exc:
        print(f"{ap.prog}: {exc}", file=sys.stderr)
        return 2
    keep_childrens_bytecode()

    from lab.measure import records

    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    timings = {}
    if not has_gpu:
        from lab.report import committed

        if refusal := no_gpu_refusal(ap, args):
            print(f"{ap.prog}: {refusal}", file=sys.stderr)
            return 2
        run_id = committed.default_run()
        print("No CUDA GPU on this machine: nothing is measured. "
              + (f"Rebuilding the committed report from its run, {run_id}." if run_id
                 else "There is no recorded run in data/runs to report on either."))
        if run_id is None:
            return 1
        out_dir = Path(tempfile.gettempdir()) / f"ablation-report-{run_id}"
    elif args.resume:
        rec = records.RunRecord.open(args.resume)
        run_id, out_dir = rec.run_id, rec.dir / "notebooks"
        left = remaining(rec, args.stop_after)
        try:  # the same code and GPU model as the run's start, or nothing runs; the machine is recorded
            resume.resume_here(rec, stages_left(rec, left))
        except ValueError as exc:
            print(f"{ap.prog}: {exc}", file=sys.stderr)
            return 2
        timings.update(run_stages(left, out_dir, run_id, run_notebook=_with_eta(rec)))
    else:
        rec = stages.start(params)
        run_id, out_dir = rec.run_id, rec.dir / "notebooks"
        # 00 opens the run just started; the parameters go with it as the executed notebook's record
        timings[MEASURE[0]] = execute(MEASURE[0], out_dir, {**params.as_text(), "run_id": run_id})
        if args.stop_after != stage_name(MEASURE[0]):
            timings.update(run_stages(remaining(rec, args.stop_after), out_dir, run_id, run_notebook=_with_eta(rec)))
    if args.stop_after:
        print(f"run {run_id} stopped after stage {args.stop_after}; go on with --resume {run_id}")
        return 0
    if args.no_report:
        close_if_measured(rec)
        print(f"run {run_id} measured; report not written (--no-report)")
        return 0
    timings[REPORT] = execute(REPORT, out_dir, {"run_id": run_id, "reports_dir": args.reports_dir})
    print("\nstage times: " + ", ".join(f"{k.split('.')[0]} {v:.0f} s" for k, v in timings.items()))
    print(f"run {run_id}: {args.reports_dir}/OPTIMIZATION_REPORT.md and {args.reports_dir}/ablation.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
