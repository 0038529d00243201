"""What every section reads (`Context`: the run, the headline shape's ablation, where figures go, and the run it
is replicated against, if any) and what the sections make of it (`Report`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lab.kernels.shape import Shape
from lab.report.formats import FIGURES
from lab.report.load import HOT, SUSTAINED, RunData
from lab.report.tables import ablation_frame, gpu_of_replicates, resumed_elsewhere


def companion_modes(companion: RunData) -> list[str]:
    """The modes of issue 46's targets (hot, sustained) a companion run measured: those its rows stand in for."""
    have = set(companion.samples["mode"]) if len(companion.samples) else set()
    return [m for m in (HOT, SUSTAINED) if m in have]


def companion_words(companion: RunData) -> str:
    """'hot', 'sustained' or 'hot and sustained' (lab.report.committed.HEADER reads it back)."""
    return " and ".join(companion_modes(companion)) or "no"


def base_on_another_gpu(data, base) -> bool:
    """Whether the report's base ran on another GPU model than its run: then the issues that judge their targets on an
    H100 and an H200 judge them on the base too ("On the other GPU")."""
    gpu = base.env.get("gpu") if base is not None else None
    return bool(gpu) and gpu != data.env.get("gpu")


def companion_of(data: RunData, base: RunData | None, companion: RunData) -> RunData:
    """The run whose rows `companion` stands in for: the report's run, or its base where the base ran on another GPU
    model and the companion on the base's (issue 46 judges its targets on an H100 and an H200: "On the other GPU")."""
    if base_on_another_gpu(data, base) and companion.env.get("gpu") == base.env.get("gpu"):
        return base
    return data


def companions_for(target: RunData, data: RunData, base: RunData | None, companions: list[RunData]) -> list[RunData]:
    """Those of `companions` whose rows stand in for `target`'s (the report's run or its base: companion_of)."""
    return [c for c in companions if companion_of(data, base, c) is target]


@dataclass
class Report:
    markdown: str
    figures: dict
    diffs: list
    title: str
    label: str


@dataclass
class Context:
    """What every section reads: the run, the headline shape's ablation and where figures go.
    Sections add the figures they draw to `figs` (key -> path) and why one was not drawn to `notes`."""
    data: RunData
    figdir: Path
    head: Shape | None = None
    abl: pd.DataFrame = field(default_factory=pd.DataFrame)
    figs: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    base: RunData | None = None  # a second run to replicate against ("Does it replicate?"), if any
    # runs of some of issue 46's target modes alone (hot, sustained) on the run's GPU model or the base's, at more
    # rounds, turns or replicates: the targets' rows they timed are judged on them too, the run's or the base's
    # (companion_of above, lab.report.sections.reference.companions_refusal)
    companions: list[RunData] = field(default_factory=list)

    @classmethod
    def of(cls, data: RunData, reports_dir: Path, base: RunData | None = None,
           companions: list[RunData] | None = None) -> "Context":
        head = data.headline()
        abl = ablation_frame(data, head, "hot") if head else pd.DataFrame()
        return cls(data=data, figdir=Path(reports_dir) / "figures", head=head, abl=abl, base=base,
                   companions=list(companions or []))

    @property
    def state(self) -> str:
        return self.data.status.get("state", "unknown")

    @property
    def gpu(self) -> str:
        return self.data.env.get("gpu", "unknown GPU")

    @property
    def gpus(self) -> str:
        """The GPU model, preceded by how many of them ran the replicates where more than one did at once (issue
        49: GPUS=N). A one-GPU run resumed on another machine (lab.studies.resume) also has replicates on two
        GPUs, one after the other: its label says so instead of counting them as a host's."""
        n = len(set(gpu_of_replicates(self.data).values()))  # 0 where one GPU ran them all
        if n < 2:
            return self.gpu
        if resumed_elsewhere(self.data):
            return f"{self.gpu}, resumed on another ({n} GPUs ran its replicates one after another)"
        return f"{n} × {self.gpu}"

    @property
    def date(self) -> str:
        return self.data.env.get("utc", "unknown date")

    @property
    def label(self) -> str:
        # lab.report.committed reads the run and the base back from this line: keep the two in step
        base = f" · replicated against {self.base.run_id}" if self.base is not None else ""
        companions = "".join(f" · {companion_words(c)} rows from {c.run_id}" for c in self.companions)
        return f"Run {self.data.run_id} · {self.gpus} · {self.date} · state: {self.state}{base}{companions}"

    def add_figure(self, add, key: str, caption: str) -> None:
        """The figure `key` as a Markdown image line (recorded in `figs`), or why it was not drawn."""
        if self.notes.get(key) is None and (self.figdir / FIGURES[key]).exists():
            self.figs[key] = self.figdir / FIGURES[key]
            add(f"![{caption}](figures/{FIGURES[key]})")
        else:
            add(f"*Figure not drawn: {self.notes.get(key)}.*")
        add("")

    def drop_stale_figures(self) -> None:
        """Remove a figure an earlier report drew that this run cannot draw."""
        for key, name in FIGURES.items():
            if key not in self.figs and (self.figdir / name).exists():
                (self.figdir / name).unlink()
