"""Run records: `data/runs/<run_id>/`, one folder per run, never overwritten.

A run folder holds each measured fact once: every raw sample, and the records that cannot be
recomputed from them. What can be (the summary table, the leave-one-replicate-out calibration,
the factorial's effects, the per-shape notes) is computed when read (lab.studies.derived) and
never written here. `docs/methodology.md` (Records) says what stays in the repository.

    env.json           GPU (and its UUID), clocks, driver, CUDA, torch, nvcc, git sha and dirty flag, the cold
                       mode's L2 flush (cold_flush: its kind and a probe's reading)
    resumes.json       each `--resume` of the run: when, host, GPU UUID, driver, the stages left
                       (lab.studies.resume.resume_here, which refuses another GPU model or code)
    status.json        {"state": "running" | "complete" | "incomplete", ...}; a run stopped
                       midway keeps "running" (or "incomplete") and readers treat it as such
    params.json        the run's parameters (lab.studies.params.RunParams); stages.json: each
                       stage's seconds
    build.json         per variant: build key, source hash, ptxas resources, launch shape, the step
                       it builds and the inputs it takes (dtypes, kv_heads); excluded.json: the
                       variants left out of timing, and why
    correctness.json   per variant and case: errors, tolerance, verdict (on disk gzip-compressed,
                       correctness.json.gz: the full grid is 6 MB of JSON)
    peers.json         per peer asked for: available (imported) or not and why; after the
                       correctness stage, its result and, where it failed, why it is excluded
    peer_correctness.json  per non-SDPA peer and case, as correctness.json (lab.measure.check.peer_grid)
    samples.parquet    every raw timing sample, tidy (see SAMPLE_COLUMNS), `replicate` naming its
                       process, `round` the round of its (shape, mode)'s round robin; a shape is
                       (B, H, S, D, causal, H_kv, dtype) (SHAPE_COLUMNS); throttled samples kept, flagged
    factorial.parquet  every raw sample of the factorial (the same columns); factorial.json its design
    stops.parquet      per plan, replicate and (impl, shape, mode): why its sampling stopped, the
                       throttled samples it dropped, its input sets (STOP_COLUMNS)
    replicates.json    per timing plan (timing, factorial): what it asked for (jobs, seeds, rule,
                       peers, build keys) and each replicate's exit code, seconds, seeds and per-job
                       notes (errors, unsupported peers, seconds). While a plan is measured its
                       replicates write under replicates/<plan>/ (lab.studies.replicates), folded
                       in here once every replicate has run
    crossval.json      event timing against the profiler's clock; flex_warmup.json, ceilings.json
                       (measured tensor-core rate and DRAM bandwidth of this GPU)
    ncu/, profile.csv  Nsight Compute's raw CSVs and the profile stage's record of each launch
                       (its parsed metrics, or why it was not profiled); profile_status.json
    notebooks/         the executed notebooks (the run's log)

`run_id` is the UTC start time and the short git sha, e.g. 20261121T231500Z-95ce086. Run folders
written before this layout (summary.csv, calibration.json, replicates/<plan>/r<i>.* beside
samples.parquet) are brought to it, every sample checked, by `python -m lab.studies.migrate`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import platform
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

from lab.kernels.manifest import REPO
from lab.measure.clocks import SUSTAINED_SLOWDOWN_MASK, Clocks

RUNS_DIR = REPO / "data" / "runs"
TUNING_DIR = REPO / "data" / "tuning"  # tuning runs (lab.studies.tuning), one folder each, as RUNS_DIR

# A row's shape (lab.kernels.shape.Shape.from_row): H_kv (K/V heads) and dtype (torch's name,
# "float16" or "bfloat16") since issue 22; tables written before lack H_kv (and summary.csv dtype).
SHAPE_COLUMNS = ["B", "H", "S", "D", "causal", "H_kv", "dtype"]
SAMPLE_COLUMNS = ["run_id", "impl", "B", "H", "S", "D", "causal", "H_kv", "dtype", "mode", "sample", "latency_us",
                  "sm_clock_mhz", "throttled", "replicate", "round", "power_w", "temp_c", "clock_reasons",
                  "sm_clock_mean_mhz"]
# (power_w, temp_c, clock_reasons: NVML at the end of the sample's turn; runs before issue 45 lack them;
# sm_clock_mean_mhz: a sustained turn's mean SM clock after its settle, read every 5 ms; runs before 2026-12-05 lack it)
SUMMARY_COLUMNS = ["impl", "B", "H", "S", "D", "causal", "H_kv", "dtype", "mode", "n", "median_us", "p10_us", "p90_us",
                   "iqr_us", "mean_us", "min_us", "ci_lo_us", "ci_hi_us", "tflops", "gbps", "stopped_by",
                   "dropped_throttled", "input_sets"]
# What the sampling of one (impl, shape, mode) in one replicate of a plan recorded besides its
# samples: why it stopped ("ci" or "cap"), how many throttled samples it dropped, its input sets.
STOP_COLUMNS = ["plan", "replicate", "impl", *SHAPE_COLUMNS, "mode", "stopped_by", "dropped_throttled", "input_sets"]
STOPS = "stops.parquet"
# Files of the layout before issue 44: derived (recomputed when read) or a second copy of the samples.
LEGACY_FILES = ("summary.csv", "calibration.json", "factorial.csv", "shapes.json")
# Parquet tables are written zstd-compressed (level 19: a run's 270 000 samples in 0.9 MB against
# snappy's 1.2 MB, written in about a second); compression never changes a value.
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 19}


class LegacyLayout(RuntimeError):
    """A run folder in the layout before issue 44: readers name the command that migrates it."""


def with_shape_columns(table):
    """A samples or summary table with every SHAPE_COLUMNS column: tables written before issue 22
    lack H_kv (every shape had H_kv = H) and summary.csv lacked dtype (every shape was float16)."""
    out = table
    if "H" not in out.columns:  # not a table of shapes
        return out
    if "H_kv" not in out.columns:
        out = out.assign(H_kv=out["H"])
    elif out["H_kv"].isna().any():
        out = out.assign(H_kv=out["H_kv"].fillna(out["H"]))
    if "dtype" not in out.columns:
        out = out.assign(dtype="float16")
    elif out["dtype"].isna().any():
        out = out.assign(dtype=out["dtype"].astype(object).fillna("float16"))  # an all-NaN column reads as float
    return out.assign(H_kv=out["H_kv"].astype(int)) if len(out) else out


def with_replicate(samples):
    """Samples as every reader takes them: runs recorded before replicates existed have no
    `replicate` column (or, written by older code, an empty one): their one replicate is 0; and
    the shape columns of with_shape_columns."""
    samples = with_shape_columns(samples)
    if "replicate" not in samples.columns:
        return samples.assign(replicate=0)
    return samples.assign(replicate=samples["replicate"].fillna(0).astype(int))


def dropped(samples):
    """Which samples (a boolean Series on samples.parquet's rows) the statistics leave out: a hot or cold sample
    flagged `throttled` (a thermal or hardware slowdown before or after its block), a sustained one whose turn ended
    in a hardware slowdown (its `clock_reasons` & clocks.SUSTAINED_SLOWDOWN_MASK; `throttled` where no reasons were
    recorded). Runs up to 20261205T192124Z-f585548 flagged sustained samples for the driver's thermal slowdown too;
    their recorded reasons decide them here as a run now decides them."""
    import pandas as pd

    thr = samples["throttled"].fillna(False).astype(bool)
    if not len(samples) or "clock_reasons" not in samples.columns or "mode" not in samples.columns:
        return thr
    reasons = pd.to_numeric(samples["clock_reasons"], errors="coerce")
    sustained = (samples["mode"] == "sustained") & reasons.notna()
    hardware = (reasons.fillna(0).astype("int64") & SUSTAINED_SLOWDOWN_MASK) != 0
    return thr.where(~sustained, hardware)


def latencies_by_replicate(samples, interleave=None) -> dict:
    """{replicate: latency_us array} of a samples table's rows (what lab.measure.stats takes). Given
    `interleave`, the round robin the rows were timed in (a run's shape and mode), and a recorded
    round for every sample (runs from 5620c21 on), a stats.RoundRobinSamples: two rows of one
    interleave are then compared round by round."""
    import numpy as np

    from lab.measure import stats

    # called once a row of a run (thousands of times a report): numpy masks, not a pandas groupby; the
    # same arrays, replicates in ascending order, each in the table's order
    which = (samples["replicate"].fillna(0).to_numpy().astype(int) if "replicate" in samples.columns
             else np.zeros(len(samples), dtype=int))  # as with_replicate numbers them
    latency = samples["latency_us"].to_numpy(float)
    masks = {int(r): which == r for r in np.unique(which)}
    lat = {r: latency[m] for r, m in masks.items()}
    if interleave is None or "round" not in samples.columns or not len(samples) or samples["round"].isna().any():
        return lat
    rounds = samples["round"].to_numpy()
    return stats.RoundRobinSamples(lat, {r: rounds[m].astype(int) for r, m in masks.items()}, interleave)


def replicates_by_row(samples, run_id=None) -> dict:
    """{(impl, Shape, mode): latencies_by_replicate of that row} over a samples table, each row's
    round robin being its run, shape and mode (so rows of one shape and mode pair by round)."""
    from lab.kernels.shape import Shape

    keys = ["impl", *SHAPE_COLUMNS, "mode"]
    out = {}
    for key, g in with_shape_columns(samples).groupby(keys):
        row = dict(zip(keys, key))
        shape = Shape.from_row(row)
        out[(row["impl"], shape, row["mode"])] = latencies_by_replicate(g, (run_id, shape, row["mode"]))
    return out


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return ""


def git_sha() -> str:
    """HEAD's sha. LAB_GIT_SHA, where set, wins: a copy of the tree on a lent GPU machine may have
    no .git, or a stale one that names some other commit."""
    return os.environ.get("LAB_GIT_SHA") or git("rev-parse", "HEAD")


def git_dirty() -> bool | None:
    flag = os.environ.get("LAB_GIT_DIRTY")
    if os.environ.get("LAB_GIT_SHA") and flag is not None:
        return flag not in ("0", "", "false")
    if git("rev-parse", "HEAD"):
        return bool(git("status", "--porcelain", "--untracked-files=no"))
    return None if flag is None else flag not in ("0", "", "false")


# What a run executes: its Python, the kernels' sources and the notebooks. code_digest hashes them.
CODE_DIRS = ("lab", "kernels", "notebooks")


def code_digest(root: Path = REPO) -> str:
    """sha256 over the path, length and bytes of every file under CODE_DIRS, in path order, bytecode caches left out.

    This identifies the code a run executes without git. A lent GPU machine's copy has no .git, and LAB_GIT_SHA
    names only the commit the copy was meant to be: a resume from another tree would go unseen."""
    files = {f.relative_to(root).as_posix(): f for top in CODE_DIRS for f in (root / top).rglob("*")
             if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"}
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel].read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def new_run_id(now: datetime | None = None, root: Path | None = None) -> str:
    root = root or RUNS_DIR
    now = now or datetime.now(timezone.utc)
    sha = git_sha()[:7] or "nogit"
    base = f"{now:%Y%m%dT%H%M%SZ}-{sha}"
    run_id, n = base, 1
    while (root / run_id).exists():  # never reuse a folder, even within one second
        n += 1
        run_id = f"{base}.{n}"
    return run_id


def environment() -> dict:
    """What the numbers depend on. GPU fields come from torch and NVML when present."""
    env = {
        "utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "git_sha": git_sha(),
        "git_dirty": git_dirty(),
        "code_digest": code_digest(),
    }
    try:
        from lab.kernels.build import nvcc_version

        env["nvcc"] = nvcc_version()
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        env["nvcc"] = f"unavailable: {exc}"
    try:
        import torch

        env["torch"] = torch.__version__
        env["cuda_runtime"] = torch.version.cuda
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            env.update(gpu=p.name, sm_count=p.multi_processor_count, compute_capability=f"{p.major}.{p.minor}",
                       l2_bytes=int(p.L2_cache_size), memory_bytes=int(p.total_memory))
            env["cudnn"] = torch.backends.cudnn.version()
            from lab.measure.clocks import gpu_identity

            env["gpu_uuid"] = gpu_identity().get("gpu_uuid", "")  # which physical GPU (a resume may run on another)
            from lab.measure.timing import COLD_FLUSH, flush_probe

            try:  # how the cold mode empties the L2, and that it does (a few ms)
                env["cold_flush"] = flush_probe()
            except Exception as exc:  # noqa: BLE001 - recorded, not fatal: the report says the probe failed
                env["cold_flush"] = {"kind": COLD_FLUSH, "error": f"{type(exc).__name__}: {exc}"}
    except ImportError:
        env["torch"] = None
    env.update(Clocks().static_info())
    return env


# Records kept gzip-compressed in a run folder (name + ".gz"): large, and committed with the runs
# the report is built from. RunRecord.read_json and has find either form.
COMPRESSED = frozenset({"correctness.json"})


class RunRecord:
    """The folder of one run. Created as "running"; `finish()` marks it complete."""

    def __init__(self, run_id: str | None = None, root: Path | None = None, create: bool = True):
        root = root or RUNS_DIR
        self.run_id = run_id or new_run_id(root=root)
        self.dir = root / self.run_id
        if create:
            self.dir.mkdir(parents=True, exist_ok=False)
            self.write_json("status.json", {"state": "running", "started": time.time()})

    @classmethod
    def open(cls, run_id: str, root: Path | None = None) -> "RunRecord":
        """The run `run_id` under `root` (default: data/runs), or, where `run_id` is a path (it holds
        a '/'), the run folder it names (a test fixture, a run in an exploration's folder)."""
        if "/" in str(run_id):
            run_id, root = Path(run_id).name, Path(run_id).parent
        root = root or RUNS_DIR
        rec = cls(run_id, root, create=False)
        if not rec.dir.is_dir():
            raise FileNotFoundError(f"no run {run_id!r} under {root}")
        return rec

    def path(self, name: str) -> Path:
        return self.dir / name

    def relative(self, path: str) -> str:
        """`path` as the run folder's own (ncu/x.csv) where it lies inside the folder, so that a record names
        its files wherever the folder is copied, not the machine that wrote it; any other path as given."""
        if not path:
            return path
        try:
            return Path(path).resolve().relative_to(self.dir.resolve()).as_posix()
        except ValueError:
            return path

    def write_json(self, name: str, obj) -> None:
        text = json.dumps(obj, indent=1, default=str)
        if name in COMPRESSED:
            tmp = self.path(name + ".gz.tmp")
            with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                gz.write(text.encode())  # no name or time in the header: the same record, the same bytes
            tmp.replace(self.path(name + ".gz"))
            self.path(name).unlink(missing_ok=True)  # a plain copy left from before would shadow nothing, but mislead
            return
        tmp = self.path(name + ".tmp")
        tmp.write_text(text)
        tmp.replace(self.path(name))  # atomic: a reader never sees half a file

    def read_json(self, name: str):
        packed = self.path(name + ".gz")
        if packed.exists():
            return json.loads(gzip.decompress(packed.read_bytes()))
        return json.loads(self.path(name).read_text())

    def has(self, name: str) -> bool:
        return self.path(name).exists() or self.path(name + ".gz").exists()

    def write_table(self, name: str, df) -> None:
        tmp = self.path(name + ".tmp")
        if name.endswith(".parquet"):
            df.to_parquet(tmp, index=False, **PARQUET_OPTIONS)
        else:
            df.to_csv(tmp, index=False)
        tmp.replace(self.path(name))

    def read_table(self, name: str):
        import pandas as pd

        return pd.read_parquet(self.path(name)) if name.endswith(".parquet") else pd.read_csv(self.path(name))

    def read_samples(self, name: str = "samples.parquet"):
        """A samples table (samples.parquet, factorial.parquet) with its `replicate` column (with_replicate)."""
        return with_replicate(self.read_table(name))

    def read_stops(self):
        """stops.parquet (STOP_COLUMNS); a run folder of the layout before it raises LegacyLayout."""
        import pandas as pd

        if self.has(STOPS):
            return with_shape_columns(self.read_table(STOPS))
        self.require_current_layout()
        return pd.DataFrame(columns=STOP_COLUMNS)

    @property
    def legacy(self) -> bool:
        """Whether this folder is in the layout before issue 44 (summary.csv and no stops.parquet)."""
        return self.has("summary.csv") and not self.has(STOPS)

    def require_current_layout(self) -> None:
        if self.legacy:
            raise LegacyLayout(f"run {self.run_id} ({self.dir}) is in the run-folder layout before issue 44 "
                               f"(summary.csv, no {STOPS}): bring it to the current one, every sample checked, "
                               f"with `python -m lab.studies.migrate {self.dir}`")

    @property
    def status(self) -> dict:
        return self.read_json("status.json") if self.has("status.json") else {"state": "unknown"}

    def finish(self, state: str = "complete", **extra) -> None:
        self.write_json("status.json", {**self.status, "state": state, "finished": time.time(), **extra})


def list_runs(root: Path | None = None) -> list[str]:
    """Run ids, oldest first (ids sort by start time)."""
    root = root or RUNS_DIR
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "status.json").exists()) if root.is_dir() else []


def latest_run(root: Path | None = None, complete_only: bool = True) -> str | None:
    root = root or RUNS_DIR
    for run_id in reversed(list_runs(root)):
        if not complete_only or RunRecord.open(run_id, root).status.get("state") == "complete":
            return run_id
    return None
