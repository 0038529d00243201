"""A plan: what each replicate of a stage measures (lab.studies.replicates runs them), written once per run
under replicates/<plan>/plan.json: the jobs (a shape, its implementations and modes, the A/A twin, its
seed), the cached builds to load, the peers, the stopping rule, R and the seeds of every replicate."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from lab.kernels.shape import Shape
from lab.measure.timing import StopRule
from lab.studies.params import REPLICATE_SEED_STRIDE

ROOT = "replicates"  # under the run's folder: one folder per plan


@dataclass
class Job:
    """One shape of a plan: what a replicate measures there. `seed` is the run's seed for its
    interleave (replicate i adds i * REPLICATE_SEED_STRIDE)."""

    shape: Shape
    impls: list  # the run's kernels measured here (names of the plan's builds)
    peers: bool  # whether the plan's peers are measured here too
    modes: list
    aa: str | None  # the implementation timed twice (A/A twin), or None
    seed: int
    scope: str = ""  # lab.studies.shapes' scope, recorded in the notes
    # The run's kernels of the scope left out because they do not take the shape's dtype or K/V
    # heads ({impl: why}), recorded in the notes as not taken (plans before issue 22: none).
    not_taken: dict = field(default_factory=dict)
    # This job's time cap per (implementation, mode) in each replicate where it is below the plan's
    # rule (lab.studies.shapes.SCOPE_CAP_S: a scope's sample budget); None: the plan's rule.
    cap_s: float | None = None
    # The plan's peers not measured here (lab.studies.shapes.SCOPE_PEERS_LEFT_OUT; plans before it: none).
    peers_left_out: list = field(default_factory=list)
    # Where set, the only plan peers measured here (the sustained mode's: lab.studies.shapes.SUSTAINED_PEERS).
    peers_only: list | None = None

    def to_json(self) -> dict:
        return {**asdict(self), "shape": list(self.shape.astuple())}

    @classmethod
    def from_json(cls, d: dict) -> Job:
        return cls(**{**d, "shape": Shape.of(d["shape"])})

    def peers_here(self, plan_peers: list) -> list:
        """The plan's peers this job measures."""
        if not self.peers:
            return []
        return [q for q in plan_peers if q.name not in self.peers_left_out
                and (self.peers_only is None or q.name in self.peers_only)]

    def rule(self, plan_rule: StopRule) -> StopRule:
        """The stopping rule this job's rows follow: the plan's, its cap lowered to cap_s where set."""
        return plan_rule if self.cap_s is None else replace(plan_rule, cap_s=min(plan_rule.cap_s, self.cap_s))


def plan_dir(run_dir: Path, plan: str) -> Path:
    return Path(run_dir) / ROOT / plan


def write_plan(rec, plan: str, jobs: list[Job], builds: dict, peers: list[str], rule: StopRule, replicates: int,
               seed: int) -> Path:
    """replicates/<plan>/plan.json: the jobs, the cached builds to load ({name: BuildResult.summary()}),
    the peers by name, each replicate's stopping rule, R and the run's seed. A plan is measured once
    per run: where one is there already (a run resumed after it was stopped midway) it is kept if it
    asks for the same measurement (jobs, rule, R, seeds, peers, build keys), with this machine's
    library paths, and refused with FileExistsError if it differs."""
    path = plan_dir(rec.dir, plan)
    body = {"plan": plan, "run_id": rec.run_id, "replicates": replicates, "seed": seed,
            "seed_stride": REPLICATE_SEED_STRIDE, "rule": asdict(rule), "builds": builds, "peers": list(peers),
            "jobs": [j.to_json() for j in jobs]}
    text = json.dumps(body, indent=1, default=str)
    folded = read_log(rec.dir).get(plan, {})
    if folded.get("consolidated"):  # measured and folded into the records before the run was resumed
        if folded.get("plan") != plan_identity(json.loads(text)):
            raise FileExistsError(f"{rec.path('replicates.json')}: a plan is measured once per run, and the one "
                                  f"recorded for {plan} asks for another measurement (jobs, rule, replicates, "
                                  "seeds, peers or build keys)")
        return rec.path("replicates.json")
    if (path / "plan.json").exists():
        old = json.loads((path / "plan.json").read_text())
        if plan_identity(old) != plan_identity(json.loads(text)):
            raise FileExistsError(f"{path / 'plan.json'}: a plan is measured once per run, and the one there asks "
                                  f"for another measurement (jobs, rule, replicates, seeds, peers or build keys)")
    path.mkdir(parents=True, exist_ok=True)
    (path / "plan.json").write_text(text)
    return path / "plan.json"


def plan_identity(body: dict) -> dict:
    """What a plan measures: everything but where this machine keeps the builds' libraries."""
    return {**{k: v for k, v in body.items() if k != "builds"},
            "builds": {name: b.get("key") if isinstance(b, dict) else b for name, b in body["builds"].items()}}


def read_plan(run_dir: Path, plan: str) -> dict:
    return json.loads((plan_dir(run_dir, plan) / "plan.json").read_text())


def replicate_seeds(plan: dict, i: int) -> tuple[int, list[int]]:
    """(input seed, [interleave seed per job]) of replicate i: replicate 0 keeps the run's own."""
    shift = plan["seed_stride"] * i
    return plan["seed"] + shift, [j["seed"] + shift for j in plan["jobs"]]


def read_log(run_dir: Path) -> dict:
    """A run's replicates.json ({} before its first replicate)."""
    path = Path(run_dir) / "replicates.json"
    return json.loads(path.read_text()) if path.exists() else {}


def child_command(run_dir, plan: str, i: int, fake: bool = False) -> list[str]:
    """The command that measures replicate i of a plan in a process of its own (lab.studies.replicate_child;
    `--fake`: synthetic latencies, no GPU)."""
    return [sys.executable, "-m", "lab.studies.replicate_child", str(run_dir), plan, "--replicate", str(i),
            *(["--fake"] if fake else [])]
