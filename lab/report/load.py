"""One run folder read once (`RunData`): its files, its samples by (impl, shape, mode), the kind
of every implementation and speedups with their intervals (its profile lookups: lab.report.profile_lookup)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lab.kernels.manifest import branch_order
from lab.kernels.shape import Shape
from lab.kernels.switches import KNOCKOUT_SEP  # `<variant>~no_<switch>`
from lab.measure import records, stats
from lab.measure.peers import contenders
from lab.report.formats import KEYS, isnum
from lab.report.profile_lookup import ProfileLookup, first_positions
from lab.studies.measure_shape import AA_SUFFIX
from lab.studies import derived
from lab.studies.params import RunParams
from lab.studies.shapes import HEADLINE
from lab.studies.tuning.space import CONFIG_SEP  # `<variant>@<configuration>`

HOT = "hot"  # the burst mode: CUDA-graph replay behind an idle GPU (lab.measure.timing)
SUSTAINED = "sustained"  # the mode of back-to-back load at the power limit (lab.measure.timing.SustainedTimer)

_NOT_IMPORTABLE = re.compile(r"^(?P<package>\S+) not importable \((?P<where>[^)]*)\): (?P<exc>\w+): (?P<message>.*)$")
_NO_MODULE = re.compile(r"No module named '(?P<module>[^']+)'")


def absent_reason_plain(why: str) -> str:
    """Why a peer was absent, in plain words: 'the flash-attn-4 package is not installed' for what the
    run recorded as "flash-attn-4 not importable (flash_attn.cute.flash_attn_func): ModuleNotFoundError:
    No module named 'flash_attn'"; a reason of another form is kept as recorded."""
    m = _NOT_IMPORTABLE.match(why.strip())
    if not m:
        return why
    if m["exc"] == "ModuleNotFoundError" and _NO_MODULE.search(m["message"]):
        return f"the {m['package']} package is not installed"
    return f"the {m['package']} package is installed but does not import ({m['exc']}: {m['message']})"


@dataclass
class RunData(ProfileLookup):
    """Everything the report reads from one run folder, loaded once; what is missing is noted."""

    rec: records.RunRecord
    missing: list[str] = field(default_factory=list)
    _speedups: dict = field(default_factory=dict)
    ablations: dict = field(default_factory=dict)  # (shape, mode) -> the ablation frame (tables.ablation_frame)

    def __post_init__(self):
        rec = self.rec
        rec.require_current_layout()  # a folder of the layout before issue 44: the command that migrates it
        self.run_id = rec.run_id
        self.env = self.read_json("env.json", {})
        self.params = self.read_json("params.json", {})
        self.status = self.read_json("status.json", {"state": "unknown"})
        self.stages = self.read_json("stages.json", {}, quiet=True)
        self.build = self.read_json("build.json", {})
        self.excluded = self.read_json("excluded.json", {}) or {}
        self.crossval = self.read_json("crossval.json", [])
        self.ncu_xval = self.read_json("ncu_xval.json", None, quiet=True)  # lab.measure.ncu_xval (runs from issue 45 on)
        self.sass_mix = self.read_json("sass_mix.json", None, quiet=True)  # lab.studies.sass_compare (issue 46 on)
        self.shape_notes = derived.shape_notes(rec)
        self.profile_status = self.read_json("profile_status.json", None)
        self.replicate_log = self.read_json("replicates.json", None, quiet=True)  # runs before replicates: none
        self.flex_warmup = self.read_json("flex_warmup.json", None, quiet=True)  # runs before the warm-up: none
        self.resumes = self.read_json("resumes.json", [], quiet=True)  # lab.studies.resume.resume_here: none if never
        from lab.studies.replicates import seconds_by_scope

        self.scope_seconds = seconds_by_scope(rec.dir)  # runs before replicates: {}
        self._load_ceilings()
        self._load_samples()
        from lab.studies.replicates import has_stops

        # computed from the samples and the stop records (lab.studies.derived)
        self.summary = derived.summary(rec) if len(self.raw_samples) and has_stops(rec) else None
        if len(self.raw_samples) and self.summary is None:
            self.missing.append(f"{records.STOPS} is missing: no stop records, so no summary table")
        self._load_profile()
        for name, why in self.excluded.items():
            self.missing.append(f"variant {name} was excluded from timing: {first_line(why)}")

    def _load_ceilings(self):
        ceil = self.read_json("ceilings.json", None)
        self.ceilings_error = None
        if isinstance(ceil, dict) and isnum(ceil.get("tensor_tflops")) and isnum(ceil.get("dram_gbps")):
            self.ceilings = ceil
        else:
            self.ceilings = None
            if isinstance(ceil, dict) and ceil.get("error"):
                self.ceilings_error = str(ceil["error"])
                self.missing.append(f"ceilings.json holds no ceilings: the measurement failed ({self.ceilings_error})")
            elif ceil is not None:
                self.missing.append("ceilings.json has no tensor_tflops/dram_gbps")

    def _load_samples(self):
        raw = self._table("samples.parquet")
        if raw is None:
            raw = pd.DataFrame(columns=records.SAMPLE_COLUMNS)
        raw = records.with_replicate(raw)  # runs recorded before replicates: one, replicate 0
        self.raw_samples = raw
        thr = records.dropped(raw) if len(raw) else pd.Series([], dtype=bool)
        self.samples = raw[~thr.to_numpy()] if len(raw) else raw
        self._lat: dict = {}  # (impl, shape, mode) -> pooled latencies: what was measured
        self._reps: dict = {}  # the same by replicate (with rounds, where recorded), where there is more to say
        if len(self.samples):
            cols = ["impl", *KEYS, "mode"]
            several = self.samples["replicate"].nunique() > 1
            rounds = "round" in self.samples.columns
            for key, grp in self.samples.groupby(cols, sort=False):
                row = dict(zip(cols, key))
                impl, shape, mode = row["impl"], Shape.from_row(row), row["mode"]
                self._lat[(impl, shape, mode)] = grp["latency_us"].to_numpy(dtype=float)
                if several or rounds:
                    # one round robin per (run, shape, mode): its rows are compared round by round
                    self._reps[(impl, shape, mode)] = records.latencies_by_replicate(grp, (self.run_id, shape, mode))

    def _load_profile(self):
        prof = self._table("profile.csv", quiet=True)
        self.profile_note = None
        if prof is None:
            if self.profile_status and not self.profile_status.get("ok", False):
                self.profile_note = f"profiling did not run: {self.profile_status.get('reason', 'no reason recorded')}"
            else:
                self.profile_note = "profile.csv is missing: no profiler metrics for this run"
            self.missing.append(self.profile_note)
            self.profile = None
        else:
            if "ok" in prof.columns:
                prof = prof[prof["ok"].astype(str).str.lower().isin(["true", "1", "1.0"])]
            prof = prof.reset_index(drop=True)
            if "global_load_requests" in prof.columns:
                # No global load instructions (every load by TMA): sectors per request is undefined,
                # not the 0 that runs recorded before lab.measure.profile said so.
                none = pd.to_numeric(prof["global_load_requests"], errors="coerce") == 0
                for col in ("global_sectors_per_request", "global_load_sectors_per_request"):
                    if col in prof.columns:
                        prof.loc[none, col] = float("nan")
            self.profile = prof
            self.profile_failed = self._table("profile.csv", quiet=True)
            if self.profile_status is None:
                self.missing.append("profile_status.json is missing")
            elif not self.profile_status.get("ok", False):
                self.profile_note = ("profiling stopped early: " + str(self.profile_status.get("reason", "no reason")))
                self.missing.append(self.profile_note)
            if not len(self.profile):
                self.missing.append("profile.csv has no successfully profiled kernel")

    # -- reading ---------------------------------------------------------------------------

    def _read(self, name, reader, default, quiet=False):
        """A run file through `reader`, or `default` with the reason noted as missing."""
        if not self.rec.has(name):
            if not quiet:
                self.missing.append(f"{name} is missing")
            return default
        try:
            return reader(name)
        except Exception as exc:  # noqa: BLE001 - a broken file is reported, not fatal
            self.missing.append(f"{name} could not be read ({type(exc).__name__}: {exc})")
            return default

    def read_json(self, name, default, quiet=False):
        """A JSON file of the run, or `default` with the reason noted as missing (not where `quiet`)."""
        return self._read(name, self.rec.read_json, default, quiet)

    def _table(self, name, quiet=False):
        return self._read(name, self.rec.read_table, None, quiet)

    @property
    def run_params(self) -> RunParams:
        """params.json as RunParams: fields a run recorded before they existed filled in with what
        that run did (lab.studies.params); the defaults where params.json is missing or broken."""
        if not hasattr(self, "_run_params"):
            try:
                self._run_params = RunParams.from_json(self.params if isinstance(self.params, dict) else {})
            except (TypeError, ValueError):
                self._run_params = RunParams.from_json({})
        return self._run_params

    # -- identities ------------------------------------------------------------------------

    @property
    def variants(self) -> list[str]:
        """The run's variants grouped by branch, each branch in manifest order (the portable steps,
        then the sm_90a ones: lab.kernels.manifest.branch_order); ones the manifest lacks go last."""
        run_names = list(self.params.get("variants") or [])
        ladder = [v.name for v in manifest_variants()]
        if not run_names:
            run_names = ladder
        ordered = branch_order(run_names) if ladder else []  # a broken manifest: none
        return ordered + [n for n in run_names if n not in ordered]

    @property
    def shapes(self) -> list[Shape]:
        """The run's shapes as its parameters list them, then any other shape it has samples at."""
        out = dict.fromkeys(Shape.of(s) for s in self.params.get("shapes", []))  # an ordered set: hashing,
        for (_, shape, _) in self._lat:  # not a list's equality test, for thousands of rows
            out.setdefault(shape)
        return list(out)

    @property
    def measured_shapes(self) -> list[Shape]:
        have = {shape for (_, shape, _) in self._lat}
        return [s for s in self.shapes if s in have]

    @property
    def modes(self) -> list[str]:
        """The burst modes the run measured (hot, cold): every table of the report but the sustained
        mode's own section is in these."""
        modes = [m for m in self.params.get("modes") or [] if m != SUSTAINED]
        for (_, _, mode) in self._lat:
            if mode not in modes and mode != SUSTAINED:
                modes.append(mode)
        return modes

    @property
    def sustained_shapes(self) -> list[Shape]:
        """The shapes measured in the sustained mode (issue 45), in the run's order."""
        have = {shape for (_, shape, mode) in self._lat if mode == SUSTAINED}
        return [s for s in self.shapes if s in have]

    def kind(self, impl: str) -> str:
        """variant | aa (A/A twin) | knockout (`<variant>~no_<switch>`) | tuning (`<variant>@...`) |
        sdpa (`sdpa_<backend>`) | peer (any other implementation: an external kernel)."""
        if impl.endswith(AA_SUFFIX):
            return "aa"
        if KNOCKOUT_SEP in impl:
            return "knockout"
        if CONFIG_SEP in impl:
            return "tuning"
        if impl in self.variants:
            return "variant"
        return "sdpa" if impl.startswith("sdpa_") else "peer"

    def impls(self, shape: Shape | None = None, studies: bool = False) -> list[str]:
        """Every implementation measured (at `shape`): variants, A/A twins, SDPA backends, then other
        peers; knock-out and tuning impls (their own sections) only with studies=True."""
        present = [impl for (impl, s, _) in self._lat if shape is None or s == shape]
        present = [i for i in dict.fromkeys(present) if studies or self.kind(i) not in ("knockout", "tuning")]
        order = [v for v in self.variants if v in present]
        order += [i for i in present if i.endswith(AA_SUFFIX) and i not in order]
        backends = [f"sdpa_{b}" for b in self.params.get("backends", [])]
        order += [b for b in backends if b in present]
        order += sorted(i for i in present if i not in order and self.kind(i) == "sdpa")
        order += sorted(i for i in present if i not in order)
        return order

    def peers(self, shape: Shape | None = None) -> list[str]:
        """SDPA's backends and external peers measured (at `shape`), in impls() order."""
        return [i for i in self.impls(shape) if self.kind(i) in ("sdpa", "peer")]

    def fastest_peer(self, shape, mode) -> str | None:
        """The peer (SDPA backend or external kernel) with the lowest median; sdpa_default only where none of
        SDPA's backends was timed beside it (lab.measure.peers.contenders)."""
        cands = contenders(i for i in self.peers(shape) if self.lat(i, shape, mode) is not None)
        return min(cands, key=lambda i: (self.median(i, shape, mode), i)) if cands else None

    def absent_peers(self) -> dict[str, str]:
        """Peers the run recorded as absent (peers.json, or an `absent` entry in shapes.json), with why."""
        out: dict[str, str] = {}
        raw = self.read_json("peers.json", None, quiet=True)
        entries = raw.items() if isinstance(raw, dict) else (((e.get("name"), e) for e in raw)
                                                               if isinstance(raw, list) else ())
        for name, e in entries:
            if not name:
                continue
            e = e if isinstance(e, dict) else {"status": e}
            status = str(e.get("status", "")).lower()
            if e.get("available") is False or status in ("absent", "unavailable", "missing", "not installed"):
                out[str(name)] = first_line(e.get("reason") or e.get("error") or status or "absent")
        for note in self.shape_notes or []:
            for name, why in ((note.get("absent") or {}) if isinstance(note, dict) else {}).items():
                out.setdefault(str(name), first_line(why))
        return out

    def absent_peers_plain(self) -> dict[str, str]:
        """absent_peers, each reason in plain words (absent_reason_plain): the package and why."""
        return {name: absent_reason_plain(why) for name, why in self.absent_peers().items()}

    def peer_sources(self) -> dict[str, str]:
        """Where each available peer's kernels came from, as the run recorded it (peers.json's `source`:
        torch's version, a package's, or a library and its hash); {} for runs recorded before it."""
        raw = self.read_json("peers.json", None, quiet=True)
        return {str(n): str(e["source"]) for n, e in (raw.items() if isinstance(raw, dict) else ())
                if isinstance(e, dict) and e.get("source")}

    def headline(self) -> Shape | None:
        shapes = self.measured_shapes or self.shapes
        if not shapes:
            return None
        return HEADLINE if HEADLINE in shapes else shapes[0]

    # -- statistics ------------------------------------------------------------------------

    def lat(self, impl: str, shape: Shape, mode: str) -> np.ndarray | None:
        """Every unthrottled sample of (impl, shape, mode), replicates pooled."""
        return self._lat.get((impl, shape, mode))

    def reps(self, impl: str, shape: Shape, mode: str) -> dict | None:
        """The same samples by replicate, {replicate: latencies}: what the statistics take (one
        replicate: {0: lat()})."""
        x = self.lat(impl, shape, mode)
        return None if x is None else self._reps.get((impl, shape, mode)) or {0: x}

    @property
    def replicates(self) -> int:
        """How many replicates (separate processes) the run's samples come from: 1 for runs
        recorded before replicates existed."""
        return max(1, int(self.samples["replicate"].nunique())) if len(self.samples) else 1

    @property
    def replicate_gpus(self) -> dict[int, dict]:
        """{replicate: the GPU its timing ran on (index, name, UUID)} from replicates.json, for runs whose
        replicates record it (issue 49); {} before."""
        runs = ((self.replicate_log or {}).get("timing") or {}).get("runs", [])
        return {r["replicate"]: r["gpu"] for r in runs if r.get("gpu")}

    def median(self, impl, shape, mode):
        """The median over replicates (lab.measure.stats.replicated_median; one replicate: the median)."""
        x = self.reps(impl, shape, mode)
        return stats.replicated_median(x) if x else None

    def median_ci(self, impl, shape, mode):
        """95 % CI of median() (order statistics; over replicates, their random-effects interval)."""
        x = self.reps(impl, shape, mode)
        return stats.replicated_median_ci(x) if x else None

    @property
    def by_round(self) -> bool:
        """Whether every sample records its round of the round robin (runs from 5620c21 on): the
        run's speedups then compare two rows round by round (stats.round_log_ratios)."""
        return bool(len(self.samples)) and "round" in self.samples.columns and \
            not self.samples["round"].isna().any()

    def speedup_words(self) -> str:
        """What a speedup of this run is, in a sentence's words (after "speedups are")."""
        interval = "95 % intervals over the replicates" if self.replicates > 1 else (
            "95 % intervals" if self.by_round else "95 % BCa intervals")
        if self.by_round:
            return f"compared round by round, both rows in the same state of the GPU (Methodology), with {interval}"
        return f"ratios of medians with {interval}"

    def median_ratio(self, impl, base, shape, mode) -> float | None:
        """median(base) / median(impl) of the latency tables (RunData.median): the speedup where the
        run has no rounds; where it has, what the round-paired speedup may differ from."""
        a, b = self.median(impl, shape, mode), self.median(base, shape, mode)
        return None if a is None or b is None else b / a

    def speedup(self, impl, base, shape, mode) -> stats.SpeedupCI | None:
        """Speedup of impl over base with its 95 % CI, seed 0 (stats.speedup_ci): compared round by
        round where the run recorded rounds, else median(base) / median(impl); BCa for one
        replicate, the random-effects interval over replicates otherwise."""
        a, b = self.reps(impl, shape, mode), self.reps(base, shape, mode)
        if a is None or b is None:
            return None
        key = (impl, base, shape, mode)
        if key not in self._speedups:
            self._speedups[key] = stats.speedup_ci(a, b, seed=0)
        return self._speedups[key]

    def fastest_sdpa(self, shape, mode) -> str | None:
        """The SDPA backend with the lowest median (sdpa_default, the dispatcher, only if alone)."""
        sdpa = [i for i in self.impls(shape) if i.startswith("sdpa_") and self.lat(i, shape, mode) is not None]
        cands = contenders(sdpa)
        return min(cands, key=lambda i: (self.median(i, shape, mode), i)) if cands else None

    def summary_row(self, impl, shape, mode) -> dict | None:
        if self.summary is None:
            return None
        s = self.summary
        index = self._row_index("summary", s, lambda: first_positions(zip(
            s["impl"], s["B"], s["H"], s["S"], s["D"], s["causal"].astype(bool), s["mode"], s["H_kv"], s["dtype"])))
        pos = index.get((impl, shape.B, shape.H, shape.S, shape.D, shape.causal, mode, shape.H_kv,
                         shape.torch_dtype_name))
        return s.iloc[pos].to_dict() if pos is not None else None

    def _row_index(self, name: str, table: pd.DataFrame, build):
        """build(), an index of `table`'s rows, made once per table (the report asks for thousands of
        rows; a boolean mask over the table each time took seconds) and again if a caller replaced
        the table."""
        cached = self.__dict__.setdefault("_row_indexes", {}).get(name)
        if cached is None or cached[0] is not table:
            cached = self._row_indexes[name] = (table, build())
        return cached[1]


def first_line(text) -> str:
    text = str(text).strip()
    line = text.splitlines()[0] if text else ""
    return line[:300]


def manifest_variants():
    """The prefill ladder's steps (what the study's timing, bar and reproduce line are about; the
    decode branch's steps are another problem, lab.kernels.manifest.PROBLEMS); () where the manifest
    is broken."""
    from lab.kernels import variants

    try:
        return tuple(v for v in variants.manifest() if v.problem == variants.PREFILL)
    except Exception:  # noqa: BLE001 - a broken manifest leaves titles out, not the report
        return ()


def step_title(v) -> str:
    """A step's title, marked where it only builds for one architecture."""
    return v.title if v.arch == "portable" else f"{v.title} [{v.arch} only]"


def manifest_variant(name):
    for v in manifest_variants():
        if v.name == name:
            return v
    return None


def run_data(rec) -> RunData:
    return rec if isinstance(rec, RunData) else RunData(rec)


def number_or_none(x):
    return float(x) if isnum(x) else None
