"""The factorial's estimate and the knock-out costs, rule by rule (issue 48: one-line bugs here survived
every test). Expectations are derived here from the method's words (lab.studies.factorial's docstrings):
OLS on the +-1 coding; one replicate: percentile intervals of the cell bootstrap's refits and their
variance; R replicates: one fit a replicate (seed + i), the mean coefficient with a t interval over the
random-effects variance (lab.measure.stats); log_effect = 2 coef and ratio = exp(2 coef). The bootstrap's
draws come from factorial._fit (not under test here: how they are drawn); what estimate makes of them is."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import patsy
import pytest

from lab.kernels import switches as sw
from lab.measure import stats
from lab.studies import factorial
from lab.studies.shapes import HEADLINE, HEADLINE_D128

FACTORS = list("abcd")
TRUTH = {"a": 0.10, "b": -0.05, "a:b": 0.03, "c:d": -0.02}


def _samples(replicates=(0,), n=6, seed=0, cells=None):
    rng = np.random.default_rng(seed)
    rows = []
    for r in replicates:
        shift = rng.normal(0, 0.01)
        for cell in cells or [dict(zip(FACTORS, lv)) for lv in itertools.product((1, -1), repeat=4)]:
            mu = 3 + shift + sum(c * np.prod([cell[f] for f in t.split(":")]) for t, c in TRUTH.items())
            rows += [dict(latency_us=x, replicate=r, **cell) for x in np.exp(mu + rng.normal(0, 0.02, n))]
    return pd.DataFrame(rows)


def _design(df):
    df = df.assign(log_latency=np.log(df["latency_us"]))
    y, X = patsy.dmatrices(factorial.formula(FACTORS), df, return_type="dataframe")
    return y.to_numpy().ravel(), X, df.groupby(FACTORS).ngroup().to_numpy()


COLUMNS_ONE = ["term", "kind", "coef", "coef_lo", "coef_hi", "coef_var", "log_effect", "ratio", "log_effect_lo",
               "ratio_lo", "log_effect_hi", "ratio_hi", "n_boot"]


def test_one_replicate_percentile_intervals_and_bootstrap_variance():
    df = _samples()
    got = factorial.estimate(df.drop(columns="replicate"), FACTORS, n_boot=40, seed=5, confidence=0.9)
    y, X, cell = _design(df)
    coef, boot = factorial._fit(y, X.to_numpy(), cell, 40, 5)
    keep = np.asarray(X.columns != "Intercept")
    assert list(got.columns) == COLUMNS_ONE
    assert list(got["term"]) == list(X.columns[keep])
    assert list(got["kind"]) == ["interaction" if ":" in t else "main" for t in got["term"]]
    np.testing.assert_allclose(got["coef"], coef[keep])
    np.testing.assert_allclose(got["coef_lo"], np.quantile(boot, 0.05, axis=0)[keep])
    np.testing.assert_allclose(got["coef_hi"], np.quantile(boot, 0.95, axis=0)[keep])
    np.testing.assert_allclose(got["coef_var"], boot.var(axis=0, ddof=1)[keep])
    for end in ("", "_lo", "_hi"):
        np.testing.assert_allclose(got["log_effect" + end], 2 * got["coef" + end])
        np.testing.assert_allclose(got["ratio" + end], np.exp(2 * got["coef" + end]))
    assert (got["n_boot"] == 40).all()


@pytest.mark.parametrize("replicates", [(0, 1), (0, 1, 2)])
def test_replicates_give_the_mean_fit_with_a_t_interval_over_the_random_effects(replicates):
    df = _samples(replicates)
    got = factorial.estimate(df, FACTORS, n_boot=30, seed=2, confidence=0.9).set_index("term")
    coefs, within = [], []
    for i, r in enumerate(replicates):
        y, X, cell = _design(df[df["replicate"] == r].reset_index(drop=True))
        keep = np.asarray(X.columns != "Intercept")
        c, boot = factorial._fit(y, X.to_numpy(), cell, 30, 2 + i)
        coefs.append(c[keep])
        within.append(boot.var(axis=0, ddof=1)[keep])
    coefs, within = np.array(coefs), np.array(within)
    terms = list(X.columns[keep])
    for t, term in enumerate(terms):
        m = coefs[:, t].mean()
        lo, hi = stats.t_interval(m, *stats.random_effects(coefs[:, t], within[:, t]), 0.9)
        assert got.at[term, "coef"] == pytest.approx(m)
        assert (got.at[term, "coef_lo"], got.at[term, "coef_hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert (got["replicates"] == len(replicates)).all()


def test_a_rank_deficient_design_is_refused_with_its_formula():
    cells = [dict(zip(FACTORS, lv)) for lv in itertools.product((1, -1), repeat=4)]
    cells = [c for c in cells if not (c["a"] == -1 and c["b"] == 1)]  # "a off needs b off": a:b aliased
    df = _samples(cells=cells)
    want = ("factorial design is rank-deficient for log_latency ~ (a + b + c + d)**2 - c:d: skipped cells alias "
            "some terms (leave them out with drop=)")
    with pytest.raises(ValueError) as err:
        factorial.estimate(df, FACTORS, n_boot=5, drop=["c:d"])
    assert str(err.value) == want


def _summary(medians: dict) -> pd.DataFrame:
    """{(impl, shape): median} as the summary table knockout_costs reads (hot rows)."""
    return pd.DataFrame([dict(impl=impl, B=s.B, H=s.H, S=s.S, D=s.D, causal=s.causal, mode="hot", median_us=m)
                         for (impl, s), m in medians.items()])


def test_a_switch_is_costed_at_the_headline_where_it_applies_there_else_at_d128():
    switches = [sw.Switch(name, "intro", "k", {}, "off", applies_to=applies, depends_on=())
                for name, applies in (("everywhere", "all"), ("d64", "D=64"), ("d128", "D=128"))]
    med = {("k", HEADLINE): 100.0, ("k", HEADLINE_D128): 200.0}
    for s, (c64, c128) in zip(switches, ((110.0, 260.0), (120.0, 270.0), (101.0, 300.0))):
        med[(s.impl, HEADLINE)], med[(s.impl, HEADLINE_D128)] = c64, c128
    got = factorial.knockout_costs(_summary(med), "k", switches).set_index("switch")
    assert got.at["everywhere", "shape"] == HEADLINE.astuple() and got.at["everywhere", "cost"] == pytest.approx(1.1)
    assert got.at["d64", "shape"] == HEADLINE.astuple() and got.at["d64", "cost"] == pytest.approx(1.2)
    assert got.at["d128", "shape"] == HEADLINE_D128.astuple() and got.at["d128", "cost"] == pytest.approx(1.5)


def test_no_knockout_measured_gives_an_empty_table_with_its_columns():
    switches = [sw.Switch("x", "intro", "k", {}, "off", applies_to="all", depends_on=())]
    got = factorial.knockout_costs(_summary({("k", HEADLINE): 100.0}), "k", switches)
    assert got.empty and list(got.columns) == ["switch", "shape", "cost"]
