"""Logistic regressions (analysis.regressions) recover planted effects in seeded synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.regressions import design_matrix, fit_logit, holm, regressions
from analysis.tables import regressions_markdown

PLANTED = 0.47  # log odds ratio per quartile step: OR = exp(0.47) = 1.60, POIROT's reported effect


def synthetic(delta: float, seed: int = 0, n_cases: int = 200, models: tuple[str, ...] = ("m1", "m2", "m3"),
              benchmark: str = "blame/synthetic", n_agents: int = 3, agents_delta: float = 0.0,
              case_sd: float = 0.3) -> pd.DataFrame:
    """Trials of two protocols on every case and model, with a planted protocol x quartile interaction.

    logit P(correct) = 0.3 T - 0.3 (Q - 2.5) + delta T (Q - 2.5) + agents_delta T (A - 3) + u_case,
    T = 1 for POIROT, Q = quartile (case index mod 4 + 1), u_case ~ N(0, case_sd): repeated
    trials of a case are correlated, as in real sweeps.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_cases):
        q = c % 4 + 1
        u = rng.normal(0.0, case_sd)
        for model in models:
            for method in ("all_at_once", "poirot"):
                t = 1.0 if method == "poirot" else 0.0
                eta = 0.3 * t - 0.3 * (q - 2.5) + delta * t * (q - 2.5) + agents_delta * t * (n_agents - 3) + u
                rows.append({
                    "benchmark": benchmark, "case": f"case{c:03d}", "model": model, "epoch": 1,
                    "protocol": method, "method": method, "quartile": q, "n_agents": n_agents,
                    "correct": float(rng.random() < 1.0 / (1.0 + math.exp(-eta))),
                })
    return pd.DataFrame(rows)


def _term(table: pd.DataFrame, spec: str, term: str, scope: str | None = None) -> pd.Series:
    rows = table[table["spec"].str.startswith(spec) & (table["term"] == term)]
    if scope is not None:
        rows = rows[rows["scope"] == scope]
    assert len(rows) == 1, table
    return rows.iloc[0]


@pytest.mark.parametrize("delta", [PLANTED, -PLANTED])
def test_planted_interaction_is_recovered_with_its_sign_and_covered_by_the_ci(delta: float) -> None:
    """M1's protocol x quartile odds ratio has the planted sign, its 95% CI (clustered by case)
    covers exp(delta) and excludes 1."""
    table = regressions(synthetic(delta))
    row = _term(table, "M1", "protocol[poirot] x quartile")
    assert (row["odds_ratio"] > 1) == (delta > 0)
    assert row["ci_low"] <= math.exp(delta) <= row["ci_high"]
    assert row["ci_high"] < 1 or row["ci_low"] > 1
    assert row["p_value"] < 0.05
    assert row["se_type"] == "CR3 cluster by case, t(199)"
    assert row["n"] == 200 * 3 * 2 and row["n_cases"] == 200


def test_ci_coverage_over_seeded_replications() -> None:
    """Across 40 seeded data sets the 95% CI covers the planted odds ratio at about its nominal rate."""
    covered = 0
    for seed in range(40):
        row = _term(regressions(synthetic(PLANTED, seed=seed)), "M1", "protocol[poirot] x quartile")
        covered += row["ci_low"] <= math.exp(PLANTED) <= row["ci_high"]
    assert covered >= 34  # nominal 38 of 40; the population-averaged OR is slightly attenuated


def test_model_based_standard_errors_are_an_option_and_are_labelled() -> None:
    frame = synthetic(PLANTED)
    clustered = _term(regressions(frame, se="cluster"), "M1", "protocol[poirot] x quartile")
    model = _term(regressions(frame, se="model"), "M1", "protocol[poirot] x quartile")
    assert model["se_type"] == "model-based, normal"
    assert model["coef"] == pytest.approx(clustered["coef"])  # same point estimate
    assert model["se"] != pytest.approx(clustered["se"])
    with pytest.raises(ValueError):
        regressions(frame, se="robust")


def test_agents_terms_need_varying_system_sizes() -> None:
    """Within one benchmark n_agents is constant: M2/M3 say so instead of repeating M1. Pooled over a
    3-agent and a 12-agent benchmark with a planted protocol x agents effect, M2 recovers its sign;
    the benchmark fixed effect absorbs n_agents itself (collinear, dropped), and M3 is fitted on
    quartiles 3-4 only."""
    small = synthetic(PLANTED, seed=1, benchmark="blame/cortex", n_agents=3, agents_delta=0.15)
    large = synthetic(PLANTED, seed=2, benchmark="blame/trading", n_agents=12, agents_delta=0.15)
    table = regressions(pd.concat([small, large], ignore_index=True))
    within = table[(table["scope"] == "blame/cortex") & table["spec"].str.startswith("M2")]
    assert len(within) == 1 and within.iloc[0]["note"].startswith("not estimable: n_agents does not vary")
    pooled = _term(table, "M2", "protocol[poirot] x n_agents", scope="pooled")
    assert pooled["odds_ratio"] > 1 and pooled["ci_low"] <= math.exp(0.15) <= pooled["ci_high"]
    m2 = table[(table["scope"] == "pooled") & table["spec"].str.startswith("M2")]
    assert "benchmark[blame/trading]" in set(m2["term"]) and "n_agents" not in set(m2["term"])
    assert "dropped n_agents (collinear)" in m2.iloc[0]["note"]
    m3 = _term(table, "M3", "protocol[poirot] x n_agents", scope="pooled")
    assert m3["n"] == (len(small) + len(large)) // 2


def test_unfittable_specs_say_why() -> None:
    one_protocol = synthetic(PLANTED)
    one_protocol = one_protocol[one_protocol["method"] == "poirot"]
    table = regressions(one_protocol)
    assert set(table["note"]) == {"not estimable: needs at least two protocols"}
    assert (table["term"] == "").all()
    no_quartiles = synthetic(PLANTED).assign(quartile=pd.NA)
    assert regressions(no_quartiles).empty


def test_design_matrix_names_and_drops_constant_columns() -> None:
    """Three models in one fit carry a configuration fixed effect (never pooled as one)."""
    frame = synthetic(PLANTED, n_cases=8)
    X, notes = design_matrix(frame, reference="all_at_once", agents=True)
    assert list(X.columns) == ["(intercept)", "config[m2]", "config[m3]", "protocol[poirot]", "quartile",
                               "protocol[poirot] x quartile"]
    assert notes == ["dropped n_agents (constant)", "dropped protocol[poirot] x n_agents (collinear)"]


def test_holm_matches_statsmodels() -> None:
    """holm() gives statsmodels' multipletests(method="holm") numbers, in the input order."""
    from statsmodels.stats.multitest import multipletests

    p = pd.Series([0.01, 0.04, 0.03, 0.2, 0.0001], index=list("abcde"))
    assert holm(p).tolist() == pytest.approx(multipletests(p.to_numpy(), method="holm")[1].tolist())
    assert holm(p).loc["e"] == pytest.approx(0.0005)


def test_separated_design_prints_a_marked_firth_row_not_a_huge_significant_odds_ratio() -> None:
    """15 cases x 3 epochs; POIROT right on every Q3-Q4 trial and the baseline never right there
    (M3, pooled with a 12-agent benchmark, separates completely). No row prints an odds ratio above
    1e4 or below 1e-4 with p < 0.05; the separated fits are Firth rows, marked as such."""
    frames = []
    for benchmark, agents, seed in (("blame/cortex", 3, 11), ("blame/trading", 12, 12)):
        part = synthetic(0.0, seed=seed, n_cases=15, models=("m",), benchmark=benchmark, n_agents=agents)
        part = pd.concat([part.assign(epoch=e) for e in (1, 2, 3)], ignore_index=True)
        top = part["quartile"] >= 3
        part.loc[top, "correct"] = (part.loc[top, "method"] == "poirot").astype(float)
        frames.append(part)
    table = regressions(pd.concat(frames, ignore_index=True))
    shown = table[table["term"] != ""]
    extreme = (shown["odds_ratio"] > 1e4) | (shown["odds_ratio"] < 1e-4)
    assert not (extreme & (shown["p_value"] < 0.05)).any(), shown
    m3 = shown[(shown["scope"] == "pooled") & shown["spec"].str.startswith("M3")]
    assert len(m3) and m3["se_type"].str.startswith("Firth penalised").all()
    assert m3["note"].str.contains("the data separate").all()
    assert "not cluster-robust" in m3.iloc[0]["se_type"]


def test_too_few_cases_print_no_p_or_ci() -> None:
    """6 cases (TradingAgents): the odds ratio is shown, its CI and p are not ("too few cases")."""
    table = regressions(synthetic(PLANTED, n_cases=6, seed=3))
    row = _term(table, "M1", "protocol[poirot] x quartile")
    assert row["se_type"].startswith("too few cases (G=6 < 10)")
    assert math.isnan(row["p_value"]) and math.isnan(row["ci_low"]) and row["odds_ratio"] > 0
    assert "| protocol[poirot] x quartile |" in regressions_markdown(table, "cluster")
    assert "too few cases | too few cases |" in regressions_markdown(table, "cluster")


def test_few_clusters_are_marked() -> None:
    row = _term(regressions(synthetic(PLANTED, n_cases=20, seed=4)), "M1", "protocol[poirot] x quartile")
    assert row["se_type"] == "CR3 cluster by case, t(19); few clusters (G=20 < 30)"


def _null_trials(rng: np.random.Generator, cases: int, epochs: int = 10) -> pd.DataFrame:
    """No protocol effect, no interaction; random case effects with SD 1 on the logit scale."""
    q = np.arange(cases) % 4 + 1
    u = rng.normal(0.0, 1.0, cases)
    eta = np.repeat(-0.3 * (q - 2.5) + u, 2 * epochs)
    protocol = np.tile(np.repeat(["all_at_once", "poirot"], epochs), cases)
    return pd.DataFrame({
        "benchmark": "blame/sim", "case": np.repeat([f"c{c:02d}" for c in range(cases)], 2 * epochs),
        "protocol": protocol, "method": protocol, "quartile": np.repeat(q, 2 * epochs), "n_agents": 3,
        "correct": (rng.random(len(eta)) < 1 / (1 + np.exp(-eta))).astype(float),
    })


def test_m1_interaction_under_no_effect_rejects_at_most_7_percent() -> None:
    """400 seeded data sets, 15 cases x 10 epochs, no true interaction: M1's interaction test
    (CR3, t(14)) rejects at most 7% at nominal 5% (CR1 with the normal reference: 10-12%)."""
    rng = np.random.default_rng(1415)
    rejected = 0
    for _ in range(400):
        data = _null_trials(rng, 15)
        X, _ = design_matrix(data, "all_at_once", agents=False)
        coefficients, _, se_type = fit_logit(data["correct"], X, data["case"], "cluster")
        assert se_type == "CR3 cluster by case, t(14)"
        rejected += coefficients.set_index("term").loc["protocol[poirot] x quartile", "p_value"] < 0.05
    assert rejected / 400 <= 0.07


def test_m1_interaction_at_6_cases_prints_no_p_value() -> None:
    """At 6 cases the report prints no interaction p at all, whatever the data (20 seeded sets)."""
    rng = np.random.default_rng(606)
    for _ in range(20):
        row = _term(regressions(_null_trials(rng, 6)), "M1", "protocol[poirot] x quartile")
        assert math.isnan(row["p_value"])


def test_firth_fallback_is_invariant_to_replicated_epochs() -> None:
    """A separated design (POIROT right on every trial) with 1, 3 and 10 identical epochs: the
    Firth rows have the same odds ratios, CIs and p-values (case-level cells)."""
    part = synthetic(0.0, seed=11, n_cases=15, models=("m",), benchmark="blame/cortex")
    part.loc[part["method"] == "poirot", "correct"] = 1.0
    tables = [regressions(pd.concat([part.assign(epoch=e) for e in range(1, k + 1)], ignore_index=True))
              for k in (1, 3, 10)]
    firth = [t[t["se_type"].str.startswith("Firth")] for t in tables]
    assert len(firth[0]) and all(len(f) == len(firth[0]) for f in firth)
    for other in firth[1:]:
        for column in ("odds_ratio", "ci_low", "ci_high", "p_value"):
            assert other[column].to_numpy() == pytest.approx(firth[0][column].to_numpy(), rel=1e-6)
