"""Logistic regressions of correctness on protocol, complexity quartile and number of agents.

Specifications (one row per trial, i.e. per sample-epoch with a score and a quartile; ``y`` is
the task's headline correctness, 0/1; ``P_j`` is the indicator of protocol j for every protocol
other than the reference protocol, which is the baseline method's protocol, ``all_at_once``)
---------------------------------------------------------------------------------------------
- **M1 (protocol x complexity)**:
  ``logit P(y=1) = b0 + sum_j a_j P_j + g Q + sum_j d_j P_j Q``
  with Q the complexity quartile as an ordinal score 1..4 (one linear slope per quartile step).
  ``exp(d_j)`` is how much protocol j's odds ratio over the reference grows per quartile step:
  the "gain grows with complexity" effect (POIROT reports OR = 1.60, p = 0.008).
- **M2 (+ agents)**: M1 ``+ h A + sum_j k_j P_j A`` with A = ``n_agents`` of the case's system.
- **M3 (agents in Q3-Q4)**: M2 fitted only on trials of cases in quartiles 3 and 4.

Scopes: each benchmark on its own, and ``pooled`` (all benchmarks together, when there are
several) without benchmark fixed effects, so in the pooled fit ``n_agents`` also carries the
between-benchmark differences (CORTEX has 3 agents, TradingAgents 12), which is where its
effect is identifiable at all; within one BLAME benchmark ``n_agents`` is constant.

Estimation: ``statsmodels`` ``Logit`` (Newton, up to 200 iterations). Columns that are constant in
the fitted data, or linearly dependent on earlier ones (design order: intercept, protocols,
quartile, protocol x quartile, agents, protocol x agents), are dropped and named in ``note``;
perfect separation and non-convergence are reported in ``note`` rather than hidden.

Standard errors (``se``):

- ``"cluster"`` (default): cluster-robust by case (``benchmark/case``), because the repeated
  trials of a case (models, protocols, epochs) are not independent. statsmodels' sandwich with its
  default small-sample correction ``G/(G-1) * (N-1)/(N-K)`` (G clusters, N trials, K
  parameters); p-values and CIs from the normal distribution. Fewer than 2 clusters falls back to
  model-based SEs, said in ``note``.
- ``"model"``: the usual model-based (inverse Hessian) SEs, which treat every trial as independent.

Each row of the result is one coefficient: ``odds_ratio = exp(coef)``, 95% CI
``exp(coef -/+ 1.96 se)``, two-sided Wald p-value, and the ``se_type`` used.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["REGRESSION_COLUMNS", "SPECS", "design_matrix", "fit_logit", "reference_protocol", "regressions"]

REGRESSION_COLUMNS: list[str] = [
    "scope", "spec", "term", "coef", "se", "odds_ratio", "ci_low", "ci_high", "p_value",
    "n", "n_cases", "se_type", "note",
]


@dataclass(frozen=True)
class Spec:
    name: str
    agents: bool
    quartiles: tuple[int, ...] = (1, 2, 3, 4)


SPECS: tuple[Spec, ...] = (
    Spec("M1 protocol x quartile", agents=False),
    Spec("M2 + agents", agents=True),
    Spec("M3 agents, Q3-Q4", agents=True, quartiles=(3, 4)),
)


def reference_protocol(protocols: Sequence[str], methods: Sequence[str], baseline_method: str) -> str:
    """The reference level: the first (sorted) protocol of the baseline method, else the first protocol."""
    pairs = sorted(set(zip(protocols, methods)))
    for protocol, method in pairs:
        if method == baseline_method:
            return protocol
    return pairs[0][0]


def design_matrix(data: pd.DataFrame, reference: str, agents: bool) -> tuple[pd.DataFrame, list[str]]:
    """The design of M1 (or M2 with ``agents``), minus dropped columns; returns (X, notes)."""
    columns: dict[str, np.ndarray] = {"(intercept)": np.ones(len(data))}
    q = data["quartile"].astype(float).to_numpy()
    others = sorted(set(data["protocol"]) - {reference})
    indicators = {p: (data["protocol"] == p).astype(float).to_numpy() for p in others}
    for p in others:
        columns[f"protocol[{p}]"] = indicators[p]
    columns["quartile"] = q
    for p in others:
        columns[f"protocol[{p}] x quartile"] = indicators[p] * q
    if agents:
        a = data["n_agents"].astype(float).to_numpy()
        columns["n_agents"] = a
        for p in others:
            columns[f"protocol[{p}] x n_agents"] = indicators[p] * a
    X = pd.DataFrame(columns, index=data.index)
    notes: list[str] = []
    kept: list[str] = []
    for name in X.columns:
        if name != "(intercept)" and np.ptp(X[name].to_numpy()) == 0:
            notes.append(f"dropped {name} (constant)")
            continue
        trial = kept + [name]
        if np.linalg.matrix_rank(X[trial].to_numpy()) < len(trial):
            notes.append(f"dropped {name} (collinear)")
            continue
        kept.append(name)
    return X[kept], notes


def fit_logit(y: pd.Series, X: pd.DataFrame, groups: pd.Series | None, se: str) -> tuple[pd.DataFrame, list[str], str]:
    """Fit one logit; returns (coefficient table, notes, se_type used)."""
    import statsmodels.api as sm

    notes: list[str] = []
    se_type = "model-based"
    fit_kwargs: dict[str, object] = {}
    if se == "cluster":
        if groups is not None and groups.nunique() >= 2:
            codes = pd.factorize(groups, sort=True)[0]
            fit_kwargs = {"cov_type": "cluster", "cov_kwds": {"groups": codes}}
            se_type = f"cluster by case (G={groups.nunique()})"
        else:
            notes.append("fewer than 2 cases: model-based SEs")
    elif se != "model":
        raise ValueError(f"se must be 'cluster' or 'model', got {se!r}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sm.Logit(y.astype(float).to_numpy(), X.to_numpy()).fit(
            disp=0, method="newton", maxiter=200, **fit_kwargs
        )
    for w in caught:
        name = type(w.message).__name__ if isinstance(w.message, Warning) else w.category.__name__
        if "Separation" in name:
            notes.append("perfect or quasi separation: estimates unreliable")
        elif "Convergence" in name or "HessianInversion" in name:
            notes.append("did not converge: estimates unreliable")
    if not result.mle_retvals.get("converged", True) and "did not converge: estimates unreliable" not in notes:
        notes.append("did not converge: estimates unreliable")
    params = np.asarray(result.params, dtype=float)
    bse = np.asarray(result.bse, dtype=float)
    conf = np.asarray(result.conf_int(0.05), dtype=float)
    with np.errstate(over="ignore"):  # a separated fit's CI runs to inf: shown as such
        table = pd.DataFrame({
            "term": list(X.columns),
            "coef": params,
            "se": bse,
            "odds_ratio": np.exp(params),
            "ci_low": np.exp(conf[:, 0]),
            "ci_high": np.exp(conf[:, 1]),
            "p_value": np.asarray(result.pvalues, dtype=float),
        })
    return table, sorted(set(notes)), se_type


def _scope_frames(samples: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    scopes = [(b, g) for b, g in samples.groupby("benchmark", sort=True)]
    if len(scopes) > 1:
        scopes.append(("pooled", samples))
    return scopes


def regressions(samples: pd.DataFrame, baseline_method: str = "all_at_once", se: str = "cluster") -> pd.DataFrame:
    """Every spec of the module docstring in every scope, as one long table (REGRESSION_COLUMNS).

    ``samples`` needs ``benchmark, case, protocol, method, quartile, n_agents, correct``. A spec
    that cannot be fitted (no trial with a quartile, a single outcome, no protocol contrast)
    gives one row with ``term = ""`` and the reason in ``note``.
    """
    if se not in ("cluster", "model"):
        raise ValueError(f"se must be 'cluster' or 'model', got {se!r}")
    needed = ["benchmark", "case", "protocol", "method", "quartile", "n_agents", "correct"]
    missing = [c for c in needed if c not in samples]
    if missing:
        raise ValueError(f"regressions need columns {missing}")
    data = samples.dropna(subset=["correct", "quartile"])
    rows: list[dict[str, object]] = []
    for scope, frame in _scope_frames(data):
        for spec in SPECS:
            part = frame[frame["quartile"].astype(int).isin(spec.quartiles)]
            rows.extend(_fit_rows(scope, spec, part, baseline_method, se))
    table = pd.DataFrame(rows, columns=REGRESSION_COLUMNS)
    return table


def _fit_rows(scope: str, spec: Spec, part: pd.DataFrame, baseline_method: str, se: str) -> list[dict[str, object]]:
    def unavailable(reason: str) -> list[dict[str, object]]:
        return [{
            "scope": scope, "spec": spec.name, "term": "", "coef": np.nan, "se": np.nan, "odds_ratio": np.nan,
            "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan, "n": len(part),
            "n_cases": part[["benchmark", "case"]].drop_duplicates().shape[0] if len(part) else 0,
            "se_type": "", "note": reason,
        }]

    if part.empty:
        return unavailable("not estimable: no trials with a quartile")
    if part["protocol"].nunique() < 2:
        return unavailable("not estimable: needs at least two protocols")
    if part["correct"].nunique() < 2:
        return unavailable("not estimable: every trial has the same outcome")
    reference = reference_protocol(part["protocol"].tolist(), part["method"].tolist(), baseline_method)
    X, notes = design_matrix(part, reference, spec.agents)
    if spec.agents and "n_agents" not in X.columns:
        return unavailable(
            "not estimable: n_agents does not vary here (one system size), so the agents terms "
            "cannot be separated from the intercept"
        )
    groups = part["benchmark"].astype(str) + "/" + part["case"].astype(str)
    from statsmodels.tools.sm_exceptions import PerfectSeparationError

    try:
        table, fit_notes, se_type = fit_logit(part["correct"], X, groups, se)
    except (np.linalg.LinAlgError, PerfectSeparationError, ValueError) as e:  # singular Hessian, separation
        return unavailable(f"not estimable: {type(e).__name__}: {e}")
    note = "; ".join([f"reference protocol {reference}", *notes, *fit_notes])
    table.insert(0, "spec", spec.name)
    table.insert(0, "scope", scope)
    table["n"] = len(part)
    table["n_cases"] = groups.nunique()
    table["se_type"] = se_type
    table["note"] = note
    return table[REGRESSION_COLUMNS].to_dict("records")
