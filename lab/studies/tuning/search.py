"""The client side of a tuning search: Optuna asks, dask workers (one per GPU) measure, Optuna is told.

One Optuna study per head dim (a configuration sets one head dim's tile constants; the other
kernel is untouched, so the two problems are independent). A trial is measured one tuning shape
at a time, each shape a task on whichever worker is free; after each shape the client reports the
running mean log-speedup to the trial, so Optuna's successive-halving pruner can stop a
configuration that is behind after its first shapes. The study keeps as many trials in flight
as there are workers. A trial that breaks a constraint is recorded (status "invalid") without
being submitted; one whose build, spill check, correctness check or launch fails is recorded
with its status and reason; both are told PRUNED (TPE ranks pruned trials as bad but ignores
failed ones, so FAIL would let it propose the same illegal region again), with the status and
reason as user attributes; a trial the pruner stops is told PRUNED too (status "pruned"). Nothing a trial does stops the search.

The objective of a trial (maximized): mean over its shapes of log(median_default / median_trial),
each ratio measured within one GPU.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

from lab.studies.tuning.space import Config, Space
from lab.studies.tuning.worker import GpuBackend, Task, run_task

POLL_S = 5.0  # how often the client looks for late tasks while it waits
SAMPLERS = ("tpe", "cmaes", "random", "bruteforce")  # bruteforce: every combination once (small spaces)


def make_sampler(name: str, seed: int):
    import warnings

    import optuna

    # multivariate TPE and the brute-force sampler are marked experimental; the warning says nothing new
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=4)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False, n_startup_trials=2)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "bruteforce":
        return optuna.samplers.BruteForceSampler(seed=seed)
    raise ValueError(f"sampler must be one of {SAMPLERS}, got {name!r}")


def distributions(space: Space, head_dim: int) -> dict:
    """Integer ranges where the legal values are evenly spaced (CMA-ES can use them), else categories."""
    import optuna.distributions as od

    out = {}
    for p in space.searched(head_dim):
        vals = sorted(p.values)
        steps = {b - a for a, b in zip(vals, vals[1:])}
        out[p.short] = (od.IntDistribution(vals[0], vals[-1], step=steps.pop()) if len(steps) == 1
                        else od.CategoricalDistribution(vals))
    return out


def restart_poisoned(client, rows: list, progress=print) -> None:
    """Restart a worker whose CUDA context a task poisoned (its later tasks would all fail)."""
    from lab.studies.tuning.worker import poisoned

    bad = poisoned(rows)
    if bad:
        progress(f"  restarting worker(s) {sorted(bad)} after a sticky CUDA error")
        try:
            client.restart_workers(sorted(bad))
        except Exception as exc:  # noqa: BLE001 - recorded in the log; the search goes on
            progress(f"  restart failed: {type(exc).__name__}: {exc}")


@dataclass
class Live:
    """A trial in flight."""

    trial: object
    study: object
    head_dim: int
    cfg: Config
    impl: str
    defines: dict
    shapes: list
    step: int = 0
    logs: list = field(default_factory=list)
    number: int = -1
    started: float = 0.0  # perf_counter when the current step's task was submitted


@dataclass
class SearchSettings:
    variant: str
    shapes: list  # (B, H, S, D, causal) tuples
    trials: int
    sampler: str = "tpe"
    seed: int = 0
    modes: tuple = ("hot",)
    rule: dict = field(default_factory=dict)
    budget_s: float = 0.0  # 0: no time budget; else no new trial is started after this many seconds
    prune: bool = True
    storage_path: str | None = None  # an Optuna journal file (the run folder keeps the studies)
    task_timeout_s: float = 180.0  # one shape of one trial (load, check, time); 0: no limit
    enqueue: dict = field(default_factory=dict)  # head dim -> parameter dicts proposed after the default


class Search:
    """Runs the ask / submit / tell loop; `on_result(rows, samples)` receives every task's output."""

    def __init__(self, client, space: Space, settings: SearchSettings, run_id: str, on_result,
                 backend_factory=GpuBackend, progress=print):
        self.client, self.space, self.s, self.run_id = client, space, settings, run_id
        self.on_result, self.backend_factory, self.progress = on_result, backend_factory, progress
        self.n_workers = max(1, len(client.scheduler_info()["workers"]))
        self.head_dims = sorted({sh[3] for sh in settings.shapes})
        self.studies = {d: self._study(d) for d in self.head_dims}
        self.measured: dict[int, dict[str, float | None]] = {d: {} for d in self.head_dims}
        self.submitted = 0  # trials sent to the GPUs
        self.number = 0  # every trial, including those never submitted
        self.asks = 0
        self.live: dict = {}  # future -> Live
        self.exhausted: set = set()  # head dims whose sampler has proposed every combination

    def _study(self, d: int):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        storage = None
        if self.s.storage_path:
            from optuna.storages import JournalStorage
            from optuna.storages.journal import JournalFileBackend

            storage = JournalStorage(JournalFileBackend(self.s.storage_path))
        pruner = (optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=2)
                  if self.s.prune else optuna.pruners.NopPruner())
        study = optuna.create_study(study_name=f"{self.run_id}-D{d}", direction="maximize", storage=storage,
                                    sampler=make_sampler(self.s.sampler, self.s.seed + d), pruner=pruner)
        searched = [p.short for p in self.space.searched(d)]
        study.enqueue_trial({short: self.space.default(d)[short] for short in searched})  # the default first
        for values in self.s.enqueue.get(d, []):  # then the run's starting configurations
            study.enqueue_trial({short: values[short] for short in searched})
        return study

    # --- the loop ---------------------------------------------------------------------------
    def run(self) -> dict:
        from distributed import wait

        t0 = time.perf_counter()
        self._fill(t0)
        while self.live:
            poll = min(POLL_S, self.s.task_timeout_s / 2) if self.s.task_timeout_s else POLL_S
            try:
                done = wait(list(self.live), timeout=poll, return_when="FIRST_COMPLETED").done
            except TimeoutError:  # distributed.wait raises when nothing finished within the timeout
                done = set()
            for future in done:
                live = self.live.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - a lost worker fails the trial, not the search
                    result = {"rows": [self._row(live, "error", f"{type(exc).__name__}: {exc}")], "samples": []}
                self._finish_task(live, result)
            self._expire()
            self._fill(t0)
        return {"trials": self.number, "submitted": self.submitted, "seconds": time.perf_counter() - t0,
                "best": {d: self._best(d) for d in self.head_dims}}

    def _finish_task(self, live: Live, result: dict) -> None:
        self.on_result(result["rows"], result["samples"])
        restart_poisoned(self.client, result["rows"], self.progress)
        self._advance(live, result["rows"])

    def _expire(self) -> None:
        """A task past the time limit (a configuration whose kernel hangs) is cancelled, recorded
        as 'timeout' and its worker restarted: the only way to free a GPU stuck in a kernel."""
        if not self.s.task_timeout_s:
            return
        now = time.perf_counter()
        late = [f for f, live in self.live.items() if now - live.started > self.s.task_timeout_s]
        if not late:
            return
        processing = self.client.processing()  # worker -> keys it is running or queued to run
        for future in late:
            live = self.live.pop(future)
            workers = sorted(w for w, keys in processing.items() if future.key in keys)
            self.client.cancel(future)
            why = f"no result after {self.s.task_timeout_s:.0f} s (a hung kernel?); worker restarted"
            self._finish_task(live, {"rows": [self._row(live, "timeout", why)], "samples": []})
            if workers:
                self.progress(f"  restarting {workers} after a task timeout")
                try:
                    self.client.restart_workers(workers)
                except Exception as exc:  # noqa: BLE001
                    self.progress(f"  restart failed: {type(exc).__name__}: {exc}")

    def _fill(self, t0: float) -> None:
        budget_left = not self.s.budget_s or time.perf_counter() - t0 < self.s.budget_s
        while (budget_left and len(self.live) < self.n_workers and self.submitted < self.s.trials
               and self.asks < 5 * self.s.trials + 20):
            if not self._ask_one():
                break

    def _next_head_dim(self) -> int | None:
        open_dims = [d for d in self.head_dims
                     if d not in self.exhausted and len(self.measured[d]) < len(self.space.legal(d))]
        if not open_dims:
            return None
        return min(open_dims, key=lambda d: (len(self.studies[d].trials), d))  # round-robin by trials asked

    def _ask_one(self) -> bool:
        d = self._next_head_dim()
        if d is None:
            return False
        self.asks += 1
        study = self.studies[d]
        trial = study.ask(distributions(self.space, d))
        cfg = self.space.config(d, trial.params)
        impl = self.space.impl_name(cfg)
        live = Live(trial, study, d, cfg, impl, self.space.defines(cfg), [sh for sh in self.s.shapes if sh[3] == d])
        live.number = self.number
        self.number += 1
        if reasons := self.space.violations(cfg):
            self._close(live, "invalid", "; ".join(reasons), fail=True)
            return True
        if impl in self.measured[d]:
            value = self.measured[d][impl]
            self._close(live, "duplicate", f"configuration already measured (value {value})", fail=value is None,
                        value=value)
            return True
        self.measured[d][impl] = None  # in flight
        self.submitted += 1
        self._submit(live)
        return True

    def _submit(self, live: Live) -> None:
        task = Task(kind="trial", run_id=self.run_id, variant=self.space.variant, shape=tuple(live.shapes[live.step]),
                    trial=live.number, step=live.step, impl=live.impl, defines=live.defines,
                    check=live.step == 0, modes=tuple(self.s.modes), rule=self.s.rule,
                    seed=self.s.seed * 1000 + live.number * 10 + live.step)
        future = self.client.submit(run_task, task, self.backend_factory, pure=False,
                                    key=f"trial-{live.number}-step-{live.step}")
        live.started = time.perf_counter()
        self.live[future] = live

    def _advance(self, live: Live, rows: list) -> None:
        for r in rows:
            r.update(self._cols(live))
        first = next((r for r in rows if r.get("mode") == self.s.modes[0]), rows[0] if rows else {})
        if first.get("status") != "ok":
            why = f"{first.get('status')}: {str(first.get('reason', ''))[:300]}"
            self._close(live, "skipped", f"not measured: the trial failed at shape {live.step + 1} ({why})",
                        fail=True, after=live.step + 1, emit=live.step + 1 < len(live.shapes))
            return
        live.logs.append(math.log(first["ratio_to_default"]))
        value = sum(live.logs) / len(live.logs)
        live.step += 1
        live.trial.report(value, live.step)  # the resource: shapes measured (the pruner's first rung is at 1)
        if live.step == len(live.shapes):
            self._tell(live, value)
            self.measured[live.head_dim][live.impl] = value
            self.progress(f"  trial {live.number:>3} D={live.head_dim} {live.impl:<40} x{math.exp(value):.3f}")
        elif live.trial.should_prune():
            self._close(live, "pruned", f"successive halving after {live.step} shape(s): mean speedup "
                        f"x{math.exp(value):.3f}", pruned=True, after=live.step)
        else:
            self._submit(live)

    def _tell(self, live: Live, value=None, state=None) -> None:
        try:
            live.study.tell(live.trial, value, state=state)
        except RuntimeError as exc:  # BruteForceSampler calls study.stop() once it has seen every
            if "Study.stop" not in str(exc):  # combination, which only optimize() allows; the
                raise  # trial is stored before that (optuna's _tell), so the space is simply done
            self.exhausted.add(live.head_dim)

    def _close(self, live: Live, status: str, reason: str, fail: bool = False, pruned: bool = False,
               value: float | None = None, after: int = 0, emit: bool = True) -> None:
        """Tell Optuna the trial's end and record a row for each shape it did not measure."""
        import optuna

        live.trial.set_user_attr("status", status)
        live.trial.set_user_attr("reason", reason[:500])
        if pruned or fail:
            # PRUNED, not FAIL, for a configuration that cannot run: TPE ignores failed trials
            # (and would propose the same illegal region again) but ranks pruned ones as bad.
            self._tell(live, state=optuna.trial.TrialState.PRUNED)
        else:
            self._tell(live, value)
        if status in ("skipped", "pruned") and live.impl in self.measured[live.head_dim]:
            self.measured[live.head_dim][live.impl] = None if status == "skipped" else \
                self.measured[live.head_dim][live.impl]
        if emit:
            rows = [self._row(live, status, reason, step=i) for i in range(after, len(live.shapes))]
            self.on_result(rows, [])
        if status not in ("duplicate",):
            self.progress(f"  trial {live.number:>3} D={live.head_dim} {live.impl:<40} {status}: {reason[:120]}")

    def _cols(self, live: Live) -> dict:
        return {"trial": live.number, "optuna_number": live.trial.number, "head_dim": live.head_dim,
                "impl": live.impl, "config": json.dumps(live.cfg.as_dict(), sort_keys=True),
                "defines": json.dumps(live.defines, sort_keys=True), **{k: v for k, v in live.cfg.values}}

    def _row(self, live: Live, status: str, reason: str, step: int | None = None) -> dict:
        step = live.step if step is None else step
        B, H, S, D, causal = live.shapes[step]
        return {"run_id": self.run_id, "kind": "trial", "step": step, "B": B, "H": H, "S": S, "D": D,
                "causal": bool(causal), "mode": self.s.modes[0], "status": status, "reason": reason,
                **self._cols(live)}

    def _best(self, d: int) -> dict | None:
        try:
            t = self.studies[d].best_trial
        except ValueError:
            return None
        cfg = self.space.config(d, t.params)
        return {"impl": self.space.impl_name(cfg), "speedup": math.exp(t.value)}
