"""Interactions between knock-outs: a full 2^4 factorial over the four costliest switches.

The four switches whose knock-out costs most at the headline shape (or, for a switch that does
not change the headline shape's kernel, at the judged shape) span 16 configurations of the last
step; the all-on one is the step itself. Combinations that break a `depends_on` rule are skipped
(and recorded). Each configuration is checked on the quick correctness grid and timed hot, all
interleaved, at the headline and one canonical shape (both D = 64, where the factors are chosen) and
at the D = 128 headline, in each of the run's R replicates (separate processes:
lab.studies.replicates). At D = 128 a D = 64-only factor changes no instruction of the kernel
(tests/test_knockouts.py checks the SASS), so its terms there are null factors: their intervals
should contain 1, as an A/A comparison's does (issue 21). Main effects and two-way interactions on
log latency come from an OLS fit of `log_latency ~ (A+B+C+D)**2` on the +-1-coded design (statsmodels). One replicate:
95 % percentile intervals from a bootstrap that resamples each cell's samples. R replicates: the
fit per replicate, the effects averaged over them, with the random-effects t interval of
lab.measure.stats.random_effects (the replicates' spread, never below the cell bootstrap's
within-replicate variance), as the speedups have.

Files in the run folder: `factorial.parquet` (every sample, throttled ones flagged) and
`factorial.json` (the design: the factors, each cell's levels, what was skipped or excluded). The
effects with their intervals (`effects`) are computed from the two when read (lab.studies.derived).

The 16 configurations are known once the timing's knock-outs are, and their builds need only the CPU
(with the quick checks, 19.4 s of the stage's 37.5 outside its replicates in the one-GPU run of
data/checks/2026-11-28-h200x4-gpus-ablation-2): the timing stage starts them in a background process
(`start_prebuild`: `python -m lab.studies.factorial RUN`) while the decode set holds the GPUs,
and the factorial, after it, finds them built.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pandas as pd

from lab.kernels import switches as sw
from lab.studies.shapes import HEADLINE, HEADLINE_CANONICAL, HEADLINE_D128

SHAPES = (HEADLINE, HEADLINE_CANONICAL, HEADLINE_D128)  # where the factorial is timed (D = 128: the null terms)
N_FACTORS = 4
N_BOOT = 1000


def knockout_costs(summary: pd.DataFrame, kernel: str, switches: list[sw.Switch], mode: str = "hot") -> pd.DataFrame:
    """Per switch of `kernel`: median(knock-out) / median(kernel) at the headline shape, or at
    the judged shape where the switch does not apply at the headline one."""
    rows = []
    hot = summary[summary["mode"] == mode]
    for s in (s for s in switches if s.kernel == kernel):
        shape = HEADLINE if s.applies(HEADLINE.D, HEADLINE.causal) else HEADLINE_D128
        at = hot[(hot.B == shape.B) & (hot.H == shape.H) & (hot.S == shape.S) & (hot.D == shape.D)
                 & (hot.causal.astype(bool) == shape.causal)].set_index("impl")["median_us"]
        if kernel in at and s.impl in at:
            rows.append(dict(switch=s.name, shape=shape.astuple(), cost=at[s.impl] / at[kernel]))
    return pd.DataFrame(rows, columns=["switch", "shape", "cost"]).sort_values("cost", ascending=False)


def choose(costs: pd.DataFrame, n: int = N_FACTORS) -> list[str]:
    """The n costliest switches that change the kernel at the headline shape (D = 64, as the
    canonical one): a D = 128-only switch would be a factor without an effect at both."""
    here = costs[[tuple(shape) == HEADLINE.astuple() for shape in costs["shape"]]]
    if len(here) < n:
        raise ValueError(f"the factorial needs {n} switches with a measured knock-out cost at {HEADLINE.astuple()}; "
                         f"the run has {len(here)}")
    return list(here["switch"][:n])


def design(kernel: str, factors: list[str], switches: list[sw.Switch]) -> tuple[list[dict], list[dict]]:
    """(legal cells, skipped cells). A cell: impl, defines, and per factor +1 (on) or -1 (off)."""
    by_name = {s.name: s for s in switches if s.kernel == kernel}
    if unknown := [f for f in factors if f not in by_name]:
        raise ValueError(f"factorial: unknown switch(es) {unknown} of {kernel}")
    cells, skipped = [], []
    for levels in itertools.product((1, -1), repeat=len(factors)):
        off = [f for f, lv in zip(factors, levels) if lv < 0]
        coded = dict(zip(factors, levels))
        missing = [d for f in off for d in by_name[f].depends_on if d in factors and d not in off]
        if missing:
            skipped.append({**coded, "reason": f"{', '.join(off)} off needs {', '.join(sorted(set(missing)))} off too"})
            continue
        if not off:
            cells.append({**coded, "impl": kernel, "defines": {}, "also_off": []})
            continue
        ko = sw.configuration(kernel, off, by_name, impl=sw.knockout_impl(kernel, "+".join(off)))
        cells.append({**coded, "impl": ko.impl, "defines": ko.defines, "also_off": [d for d in ko.off if d not in off]})
    return cells, skipped


def formula(factors: list[str], drop: list[str] = ()) -> str:
    return f"log_latency ~ ({' + '.join(factors)})**2" + "".join(f" - {t}" for t in drop)


def aliased_terms(factors: list[str], switches: list[sw.Switch]) -> list[str]:
    """Interactions of a switch with one it depends on: their skipped cells leave them aliased
    with the two main effects (not estimable), so the model leaves them out."""
    by_name = {s.name: s for s in switches}
    return [f"{a}:{b}" for a, b in itertools.combinations(factors, 2)
            if b in by_name[a].depends_on or a in by_name[b].depends_on]


def estimate(samples: pd.DataFrame, factors: list[str], n_boot: int = N_BOOT, seed: int = 0,
             confidence: float = 0.95, drop: list[str] = ()) -> pd.DataFrame:
    """Effects of one shape's samples (columns latency_us, the +-1 factor columns and, where the
    run has replicates, `replicate`).

    `coef` is the OLS coefficient on the +-1 coding; `log_effect` = 2 coef is the change in mean
    log latency from off to on (negative: the switch makes the kernel faster); `ratio` =
    exp(log_effect) its latency ratio. Intervals, one replicate: percentiles of the bootstrap
    refits; R replicates: see the module's docstring. `drop`: interaction terms left out of the
    model (see aliased_terms)."""
    import patsy

    df = samples.assign(log_latency=np.log(samples["latency_us"].to_numpy(float))).reset_index(drop=True)
    y, X = patsy.dmatrices(formula(factors, drop), df, return_type="dataframe")
    if np.linalg.matrix_rank(X.to_numpy()) < X.shape[1]:
        raise ValueError(f"factorial design is rank-deficient for {formula(factors, drop)}: skipped cells "
                         "alias some terms (leave them out with drop=)")
    cell = df.groupby(factors).ngroup().to_numpy()
    yv, Xv = y.to_numpy().ravel(), X.to_numpy()
    rep = df["replicate"].to_numpy() if "replicate" in df.columns else np.zeros(len(df), dtype=int)
    keep = np.asarray(X.columns != "Intercept")
    out = pd.DataFrame({"term": X.columns[keep]})
    reps = np.unique(rep)
    if len(reps) < 2:
        coef, boot = _fit(yv, Xv, cell, n_boot, seed)
        alpha = (1 - confidence) / 2
        lo, hi = np.quantile(boot, [alpha, 1 - alpha], axis=0)
        out = out.assign(coef=coef[keep], coef_lo=lo[keep], coef_hi=hi[keep], coef_var=boot.var(axis=0, ddof=1)[keep])
    else:
        from lab.measure import stats

        fits = [_fit(yv[rep == r], Xv[rep == r], cell[rep == r], n_boot, seed + i) for i, r in enumerate(reps)]
        coefs = np.stack([c[keep] for c, _ in fits])  # replicate x term
        within = np.stack([b.var(axis=0, ddof=1)[keep] for _, b in fits])
        mean = coefs.mean(axis=0)
        bounds = [stats.t_interval(float(m), *stats.random_effects(coefs[:, t], within[:, t]), confidence)
                  for t, m in enumerate(mean)]
        out = out.assign(coef=mean, coef_lo=[b[0] for b in bounds], coef_hi=[b[1] for b in bounds],
                         replicates=len(reps))
    out.insert(1, "kind", np.where(out.term.str.contains(":"), "interaction", "main"))
    for col in ("coef", "coef_lo", "coef_hi"):
        out[col.replace("coef", "log_effect")] = 2 * out[col]
        out[col.replace("coef", "ratio")] = np.exp(2 * out[col])
    out["n_boot"] = n_boot
    return out


def _fit(y: np.ndarray, X: np.ndarray, cell: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients of one replicate's samples, and n_boot refits on resamples of each cell's samples."""
    import statsmodels.api as sm

    coef = sm.OLS(y, X).fit().params
    groups = [np.flatnonzero(cell == g) for g in np.unique(cell)]
    rng = np.random.default_rng(seed)
    boot = np.empty((n_boot, X.shape[1]))
    for b in range(n_boot):
        idx = np.concatenate([g[rng.integers(0, g.size, g.size)] for g in groups])
        boot[b] = np.linalg.lstsq(X[idx], y[idx], rcond=None)[0]  # the OLS refit (sm.OLS: 20x slower)
    return np.asarray(coef), boot


def run(rec, kernel: str, progress=print, spawn=None, pool=None) -> None:
    """The factorial stage of a run: choose, build, check, time (the run's replicates), estimate,
    write. Records why where it cannot run (too few knock-outs timed, builds or checks failed),
    never raises. `spawn`: how a replicate runs (lab.studies.replicates.run's); `pool`: the stage's
    lab.studies.gpu_pool.SharedPool (default: a pool of its own)."""
    try:
        _run(rec, kernel, progress, spawn, pool)
    except Exception as exc:  # noqa: BLE001 - a failed factorial never takes the run down
        rec.write_json("factorial.json", {"ok": False, "reason": f"{type(exc).__name__}: {exc}"})
        progress(f"  factorial skipped: {exc}")


def kernel_of(rec) -> str | None:
    """The kernel the run's factorial is over: the headline branch's end among its variants that declare
    switches (the sm_90a end on Hopper, else the portable end); None where none does."""
    from lab.kernels.manifest import headline_end
    from lab.studies.params import RunParams

    p = RunParams.read(rec)
    with_switches = {k for k, _, _ in sw.run_configs(list(p.variants)).values()} if p.knockouts else set()
    kernels = [v for v in p.variants if v in with_switches]
    return headline_end(kernels) if kernels else None


def plan(rec, kernel: str):
    """(costs, factors, cells, skipped, aliased terms) of the run's factorial over `kernel`: from its timing's
    knock-outs, the same wherever computed (the summary is kept: lab.studies.derived)."""
    from lab.studies import derived

    switches = sw.load()[0]
    costs = knockout_costs(derived.summary(rec), kernel, switches)
    factors = choose(costs)
    cells, skipped = design(kernel, factors, switches)
    return costs, factors, cells, skipped, aliased_terms(factors, switches)


def build_cells(kernel: str, cells: list[dict], progress=print, arch: str | None = None) -> dict:
    """The configurations built (or found built) for `arch` (default: this process's GPU's)."""
    from lab.kernels import build

    return build.build_all([], arch=arch, progress=progress,
                           configs={c["impl"]: (kernel, c["defines"]) for c in cells})


def _run(rec, kernel: str, progress, spawn=None, pool=None) -> None:
    from lab.measure import check
    from lab.studies import gpu_pool, replicates
    from lab.studies.params import RunParams

    p = RunParams.read(rec)
    costs, factors, cells, skipped, drop = plan(rec, kernel)
    progress(f"  factorial over {factors}: {len(cells)} configurations, {len(skipped)} skipped (depends_on)")
    built = build_cells(kernel, cells, progress)
    kernels = {n: r.load() for n, r in built.items() if r.ok}
    excluded = {n: "build failed: " + r.log[:500] for n, r in built.items() if not r.ok}
    results = list(check.run_grid(kernels, check.small_grid()))
    for n in list(kernels):
        if failed := [r for r in results if r.variant == n and r.failed]:  # not taken (bf16, grouped K/V): no failure
            excluded[n] = f"failed {len(failed)} quick-grid cases, e.g. {failed[0].explain()}"
            kernels.pop(n)
    jobs = [replicates.Job(shape, list(kernels), False, ["hot"], None, p.seed + 1000 + i, "factorial")
            for i, shape in enumerate(SHAPES)]
    replicates.write_plan(rec, "factorial", jobs, {n: built[n].summary() for n in kernels}, [], p.replicate_rule(),
                          p.replicates, p.seed)
    with gpu_pool.SharedPool(p.gpus) if pool is None else contextlib.nullcontext(pool) as shared:
        replicates.run(rec, "factorial", progress, executor=shared.executor(),  # -> factorial.parquet
                       **({"spawn": spawn} if spawn else {}))
    rec.write_json("factorial.json", {"ok": True, "kernel": kernel, "factors": factors, "formula": formula(factors, drop),
                                      "not_estimable": drop,
                                      "costs": costs.assign(shape=costs["shape"].map(list)).to_dict("records"),
                                      "cells": cells, "skipped": skipped, "excluded": excluded,
                                      "shapes": [list(s.astuple()) for s in SHAPES], "mode": "hot"})


def run_effects(rec) -> pd.DataFrame | None:
    """A run's factorial effects (effects of factorial.parquet under factorial.json's design, the
    run's seed), kept under build/derived/ (lab.studies.derived.kept); None where the run has no
    factorial that ran."""
    import sys

    from lab.measure import stats
    from lab.studies import derived
    from lab.studies.params import RunParams

    if not rec.has("factorial.json") or not rec.has("factorial.parquet"):
        return None
    meta = rec.read_json("factorial.json")
    if not meta.get("ok"):
        return None
    rec.require_current_layout()
    return derived.kept(rec, "factorial", ["factorial.parquet", "factorial.json", "params.json"],
                        [stats, sys.modules[__name__]],
                        lambda: effects(rec.read_samples("factorial.parquet"), meta, RunParams.read(rec).seed), table=True)


def effects(samples: pd.DataFrame, meta: dict, seed: int = 0) -> pd.DataFrame:
    """The factorial's effects per shape (estimate) from its samples (factorial.parquet; throttled ones
    left out) and its design (factorial.json: the factors, each cell's levels, the terms left out),
    with whether each term's switches change the kernel at that shape (`applies`)."""
    from lab.measure import records

    factors, drop = meta["factors"], meta.get("not_estimable", [])
    switches = {s.name: s for s in sw.load()[0]}
    if unknown := [f for f in factors if f not in switches]:
        raise ValueError(f"factorial.json names factor(s) {unknown} that kernels/variants/manifest.toml no longer declares")
    levels = pd.DataFrame([{k: c[k] for k in ["impl", *factors]} for c in meta["cells"]])
    kept = samples[~records.dropped(samples)].merge(levels, on="impl")
    out = []
    for (B, H, S, D, causal), one in kept.groupby(["B", "H", "S", "D", "causal"]):
        est = estimate(one, factors, seed=seed, drop=drop)
        applies = {f: switches[f].applies(D, causal) for f in factors}
        est["applies"] = [all(applies[t] for t in term.split(":")) for term in est.term]
        out.append(est.assign(B=B, H=H, S=S, D=D, causal=causal))
    return pd.concat(out, ignore_index=True)


# --- built ahead ---------------------------------------------------------------------------------

PREBUILD_NICE = 10  # below the decode set's processes, which time beside it


def prebuild(rec) -> int:
    """Build the run's factorial configurations (what `_run` builds first) for the run's GPU (its recorded
    compute capability: this process never touches a GPU); the number built or found."""
    import torch  # noqa: F401 - loaded first, as in every process that builds: a built library links against it

    kernel = kernel_of(rec)
    if kernel is None:
        return 0
    cells = plan(rec, kernel)[2]
    arch = rec.read_json("env.json")["compute_capability"]
    return sum(r.ok for r in build_cells(kernel, cells, lambda s: None, arch).values())


def start_prebuild(rec, popen=None):
    """prebuild in a background process at a lower priority (the timing stage starts it before the decode
    set), with no GPU visible to it; None where it could not start (the factorial then builds its
    configurations itself)."""
    from lab.studies import background

    return background.start("lab.studies.factorial", rec, PREBUILD_NICE, {"CUDA_VISIBLE_DEVICES": ""}, popen)


def main(argv: list[str] | None = None) -> int:
    from lab.studies import background

    return background.main("lab.studies.factorial", "build a run's factorial configurations ahead of its "
                           "factorial (the timing stage runs this)",
                           lambda rec: f"factorial configurations built: {prebuild(rec)}", argv)


if __name__ == "__main__":
    import sys

    sys.exit(main())
