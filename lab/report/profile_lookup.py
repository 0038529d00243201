"""The profile rows a report reads for a shape (RunData's part for profile.csv): the profiled shape standing
for a shape, the one a hypothesis metric is read from, and the row of an implementation there."""

from __future__ import annotations

import pandas as pd

from lab.kernels.shape import Shape


def first_positions(keys) -> dict:
    """{key: position of its first occurrence} over an iterable of keys, in first-seen order."""
    index: dict = {}
    for pos, key in enumerate(keys):
        index.setdefault(key, pos)
    return index


def judged_rows(p: pd.DataFrame) -> pd.Series:
    """Which rows of a profile table were profiled only for a step's hypothesis (purpose "judged",
    lab.studies.profiling.JUDGED); none in a run recorded before the column."""
    from lab.studies.profiling import JUDGED

    if "purpose" not in p.columns:
        return pd.Series(False, index=p.index)
    return p["purpose"].fillna("").astype(str) == JUDGED


class ProfileLookup:
    """RunData's profile lookups: `self.profile` (profile.csv's rows that ran, or None), `self.profile_failed`
    (all its rows) and `self._row_index` (an index made once a table) come from RunData."""

    def profile_shape_for(self, shape: Shape) -> Shape | None:
        """The profiled shape standing for `shape`: itself, else same S and D non-causal (largest
        B*H, as lab.studies.profiling.one_per_s_and_d picks), else same S and D causal. Shapes profiled
        only for a step's hypothesis (profile.csv's purpose "judged") stand for nothing: metric_shape_for."""
        if self.profile is None or not len(self.profile):
            return None
        p = self.profile
        judged_only = self._judged_only_shapes(p)
        shapes = [s for s in self._profile_rows(p) if s not in judged_only]
        if shape in shapes:
            return shape
        # same S and D, and the same inputs (a bf16 or grouped-query shape is not stood for by fp16 MHA)
        same = [s for s in shapes if s.S == shape.S and s.D == shape.D and (s.dtype, s.group) == (shape.dtype, shape.group)]
        for causal in (False, True):
            c = sorted((s for s in same if s.causal == causal), key=lambda s: (-s.B * s.H, s.B))
            if c:
                return c[0]
        return None

    def general_profile(self) -> pd.DataFrame | None:
        """profile.csv's rows that ran, less those profiled only for a step's hypothesis (purpose "judged"):
        what the report's profile-wide figures and statements describe."""
        p = self.profile
        return p if p is None else p[~judged_rows(p)]

    def judged_only_shapes(self) -> list[Shape]:
        """The shapes profiled only for the steps judged there (lab.studies.profiling.judged_profile_work)."""
        if self.profile is None or not len(self.profile):
            return []
        return sorted(self._judged_only_shapes(self.profile), key=lambda s: s.dims + (s.causal,))

    def metric_shape_for(self, shape: Shape) -> Shape | None:
        """The profiled shape a hypothesis metric at `shape` is read from: `shape` itself where it was
        profiled (for the steps judged there, lab.studies.profiling.judged_profile_work), else
        profile_shape_for's stand-in where it masks as `shape` does, else None: a causal-only step's metric
        is not read from a non-causal launch, where its change does not run."""
        if self.profile is None or not len(self.profile):
            return None
        if shape in self._profile_rows(self.profile):
            return shape
        stand_in = self.profile_shape_for(shape)
        return stand_in if stand_in is not None and stand_in.causal == shape.causal else None

    def _judged_only_shapes(self, p: pd.DataFrame) -> set:
        """The shapes of profile.csv whose every row is of purpose "judged" (made once a table)."""
        def build():
            judged = judged_rows(p)
            return ({Shape.from_row(r) for r in p[judged].itertuples()}
                    - {Shape.from_row(r) for r in p[~judged].itertuples()})

        return self._row_index("profile_judged_only", p, build)

    def profile_row(self, impl: str, pshape: Shape | None) -> dict | None:
        if pshape is None or self.profile is None:
            return None
        p = self.profile
        pos = self._profile_rows(p).get(pshape, {}).get(impl)  # the shape with H_kv and dtype (since issue 22)
        return p.iloc[pos].to_dict() if pos is not None else None

    def _profile_rows(self, p: pd.DataFrame) -> dict:
        """{shape: {impl: position of its first row}} of the profile table, shapes in table order."""
        def build():
            by_shape: dict = {}
            for (impl, shape), pos in first_positions(zip(p["impl"], map(Shape.from_row, p.itertuples()))).items():
                by_shape.setdefault(shape, {})[impl] = pos
            return by_shape

        return self._row_index("profile", p, build)

    def profile_failure(self, impl: str, pshape: Shape | None) -> str | None:
        p = getattr(self, "profile_failed", None)
        if p is None or pshape is None or "reason" not in p.columns:
            return None
        sel = p[(p["impl"] == impl) & (p["S"] == pshape.S) & (p["D"] == pshape.D)]
        sel = sel[~sel["ok"].astype(str).str.lower().isin(["true", "1", "1.0"])]
        return str(sel.iloc[0]["reason"]) if len(sel) else None

