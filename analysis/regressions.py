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

Scopes: each benchmark and **sample setting** (the task arguments and data revisions of the
configuration, ``analysis.configs``: runs with and without ``with_reference_answer`` are separate
scopes, named ``<benchmark> [<arguments>]`` when a benchmark has several), and ``pooled`` (all
benchmarks together, when there are several and each has one sample setting; otherwise not
fitted, and the row says why) with a **benchmark fixed effect** (one indicator per benchmark but
the first), so that between-benchmark differences are not loaded onto ``n_agents``; with one
system size per benchmark (BLAME) ``n_agents`` is then collinear with the fixed effects and
dropped, and only the protocol x agents interaction is identified. Several models (or model
settings) in one scope get a **configuration fixed effect** ``config[<model> <hash>]`` (one
indicator per configuration but the first): a fit over models never treats them as one.

Estimation: ``statsmodels`` ``Logit`` (Newton, up to 200 iterations). Columns that are constant in
the fitted data, or linearly dependent on earlier ones (design order: intercept, benchmarks,
protocols, quartile, protocol x quartile, agents, protocol x agents), are dropped and named in
``note``.

Standard errors and reference distribution (``se``):

- ``"cluster"`` (default): cluster-robust by case (``benchmark/case``), because the repeated
  trials of a case (models, protocols, epochs) are not independent. **CR3**, the cluster
  jackknife sandwich (:func:`cr3_covariance`), rather than statsmodels' CR1 (factor
  ``G/(G-1) (N-1)/(N-K)``): with no true interaction and 15 cases x 10 epochs, CR1 with a t
  reference rejected M1's interaction 7.0% of the time at nominal 5% (400 seeded data sets),
  CR3 4.75%. Wald tests and CIs use **t with G - 1 degrees of freedom**, not the normal. Under
  :data:`FEW_CASES` clusters the header says "few clusters". Under :data:`TOO_FEW_CASES`
  clusters the t reference is still anti-conservative (9% at 6 cases with CR1), so the table
  prints the odds ratio with "too few cases" in place of its CI and p-value.
- ``"model"``: the usual model-based (inverse Hessian) SEs, which treat every trial as
  independent, with normal-reference Wald tests.

**Separation.** Before the ML fit, separation is checked with the linear program of Konis (2007)
(``firthmodels.detect_separation``). When the data separate (some ML estimate is infinite), or
the ML fit does not converge, the spec is fitted by **Firth's penalised logistic regression**
(``firthmodels.FirthLogisticRegression``) with profile-likelihood 95% CIs and penalised
likelihood-ratio p-values, on **case-level cells** (:func:`case_cells`: each case's mean outcome
per design row, weight 1 per cell), so replicated epochs are not counted as evidence: the same
per-case pattern gives the same fit with 1, 3 or 10 identical epochs (the trial-level Firth fit
gave p = 0.142, 0.057 and 0.025). ``se_type`` says so and that this CI and p do not account for
any remaining dependence between a case's cells (protocols, quartile rows). A separated
maximum-likelihood fit never prints a CI or p.

Multiplicity: ``p_holm`` and ``family`` are filled by ``analysis.family`` (the pre-specified
confirmatory family: M1's protocol x quartile interaction of each named treatment per benchmark,
with Table 1's comparisons); every other p-value is exploratory.

Each row of the result is one coefficient: ``odds_ratio = exp(coef)``, 95% CI
``exp(coef -/+ q se)`` with q the 97.5% quantile of the reference (t(G-1) or normal), two-sided
Wald p-value, and the ``se_type`` used.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "FEW_CASES", "REGRESSION_COLUMNS", "SPECS", "TOO_FEW_CASES", "design_matrix", "fit_logit",
    "reference_protocol", "regressions",
]

FEW_CASES = 30
"""Below this many clusters (cases) the table says "few clusters"."""
TOO_FEW_CASES = 10
"""Below this many clusters no cluster-robust CI or p-value is printed ("too few cases")."""

REGRESSION_COLUMNS: list[str] = [
    "scope", "spec", "outcome", "term", "coef", "se", "odds_ratio", "ci_low", "ci_high", "p_value",
    "p_holm", "family", "n", "n_cases", "se_type", "note",
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
    """The design of M1 (or M2 with ``agents``), minus dropped columns; returns (X, notes).

    With more than one benchmark in ``data`` the benchmark fixed effects follow the intercept, then
    with more than one configuration the configuration fixed effects.
    """
    columns: dict[str, np.ndarray] = {"(intercept)": np.ones(len(data))}
    if "benchmark" in data:
        for benchmark in sorted(set(data["benchmark"].astype(str)))[1:]:
            columns[f"benchmark[{benchmark}]"] = (data["benchmark"].astype(str) == benchmark).astype(float).to_numpy()
    strata = _configurations(data)
    for stratum in sorted(set(strata))[1:]:
        columns[f"config[{stratum}]"] = (strata == stratum).astype(float).to_numpy()
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


def _separated(y: np.ndarray, X: np.ndarray) -> bool:
    from firthmodels import detect_separation

    return bool(detect_separation(X, y, fit_intercept=False).separation)


def case_cells(y: np.ndarray, X: pd.DataFrame, groups: pd.Series | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trials as case-level aggregates: one cell per (case, design row), its mean outcome m
    entered as two rows, y = 1 with weight m and y = 0 with weight 1 - m (zero weights dropped), so
    that each cell weighs 1 however many replicates it holds. Returns (X, y, weights)."""
    keys = pd.DataFrame(X.to_numpy(), index=X.index)
    keys.insert(0, "_case", groups.to_numpy() if groups is not None else np.arange(len(X)))
    keys["_y"] = y
    cells = keys.groupby(list(keys.columns[:-1]), sort=True)["_y"].mean().reset_index()
    design = cells.iloc[:, 1:-1].to_numpy(dtype=float)
    mean = cells["_y"].to_numpy(dtype=float)
    Xs, ys, ws = np.vstack([design, design]), np.r_[np.ones(len(mean)), np.zeros(len(mean))], np.r_[mean, 1 - mean]
    keep = ws > 0
    return Xs[keep], ys[keep], ws[keep]


def _firth(y: np.ndarray, X: pd.DataFrame, groups: pd.Series | None = None) -> pd.DataFrame:
    """Firth's penalised logit on the case-level cells (:func:`case_cells`): coefficients,
    profile-likelihood 95% CIs, penalised LRT p-values."""
    from firthmodels import FirthLogisticRegression

    design, outcome, weights = case_cells(y, X, groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = FirthLogisticRegression(fit_intercept=False, max_iter=100, backend="numpy").fit(
            design, outcome, sample_weight=weights)
        model.lrt()
        conf = np.asarray(model.conf_int(method="pl", max_iter=100), dtype=float)
    coef = np.asarray(model.coef_, dtype=float)
    return pd.DataFrame({
        "term": list(X.columns), "coef": coef, "se": np.asarray(model.bse_, dtype=float),
        "odds_ratio": np.exp(coef), "ci_low": np.exp(conf[:, 0]), "ci_high": np.exp(conf[:, 1]),
        "p_value": np.asarray(model.lrt_pvalues_, dtype=float),
    })


def cr3_covariance(X: np.ndarray, y: np.ndarray, beta: np.ndarray, groups: pd.Series) -> np.ndarray:
    """CR3 (cluster jackknife) sandwich of a logit fit (Bell and McCaffrey 2002; Pustejovsky and
    Tipton 2018, for GLMs): with W = diag(mu (1 - mu)), B = X'WX, Pearson residuals
    r = (y - mu) / sqrt(w), and for cluster g the hat block H_g = W_g^1/2 X_g B^-1 X_g' W_g^1/2,
    the adjusted score u_g = X_g' W_g^1/2 (I - H_g)^-1 r_g and
    V = (G - 1)/G B^-1 (sum_g u_g u_g') B^-1: each cluster's score as if it had been left out."""
    mu = 1.0 / (1.0 + np.exp(-(X @ beta)))
    w = mu * (1.0 - mu)
    root = np.sqrt(w)
    bread = np.linalg.inv(X.T @ (X * w[:, None]))
    residual = (y - mu) / root
    codes = pd.factorize(groups, sort=True)[0]
    meat = np.zeros_like(bread)
    for g in range(codes.max() + 1):
        rows = codes == g
        Z = X[rows] * root[rows, None]
        # pinv: a cluster with leverage 1 (it alone identifies a parameter) has a singular I - H_g
        adjusted = np.linalg.pinv(np.eye(int(rows.sum())) - Z @ bread @ Z.T) @ residual[rows]
        u = Z.T @ adjusted
        meat += np.outer(u, u)
    n_groups = codes.max() + 1
    return (n_groups - 1) / n_groups * bread @ meat @ bread


def fit_logit(y: pd.Series, X: pd.DataFrame, groups: pd.Series | None, se: str) -> tuple[pd.DataFrame, list[str], str]:
    """Fit one logit (module docstring); returns (coefficient table, notes, se_type used)."""
    import statsmodels.api as sm
    from scipy import stats

    if se not in ("cluster", "model"):
        raise ValueError(f"se must be 'cluster' or 'model', got {se!r}")
    outcome = y.astype(float).to_numpy()
    n_groups = int(groups.nunique()) if groups is not None else 0
    if se == "cluster" and n_groups < 2:
        return fit_logit(y, X, None, "model")[0], ["fewer than 2 cases: model-based SEs"], "model-based"
    separated = _separated(outcome, X.to_numpy())
    converged = False
    if not separated:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = sm.Logit(outcome, X.to_numpy()).fit(disp=0, method="newton", maxiter=200)
                converged = bool(result.mle_retvals.get("converged", False))
            except np.linalg.LinAlgError:
                converged = False
        if any("Convergence" in w.category.__name__ or "HessianInversion" in w.category.__name__ for w in caught):
            converged = False
    if separated or not converged:
        why = "the data separate (an ML estimate is infinite)" if separated else "the ML fit did not converge"
        table = _firth(outcome, X, groups)
        return table, [f"{why}: Firth fit on case-level cells"], (
            "Firth penalised on case-level cells, profile-likelihood CI, LRT p; not cluster-robust")
    params = np.asarray(result.params, dtype=float)
    bse = np.asarray(result.bse, dtype=float)
    if se == "cluster":
        bse = np.sqrt(np.diag(cr3_covariance(X.to_numpy(), outcome, params, groups)))
        df = n_groups - 1
        quantile = float(stats.t.ppf(0.975, df))
        pvalues = 2 * stats.t.sf(np.abs(params / bse), df)
        se_type = f"CR3 cluster by case, t({df})"
    else:
        quantile = float(stats.norm.ppf(0.975))
        pvalues = 2 * stats.norm.sf(np.abs(params / bse))
        se_type = "model-based, normal"
    with np.errstate(over="ignore"):
        table = pd.DataFrame({
            "term": list(X.columns), "coef": params, "se": bse, "odds_ratio": np.exp(params),
            "ci_low": np.exp(params - quantile * bse), "ci_high": np.exp(params + quantile * bse),
            "p_value": pvalues,
        })
    return table, [], se_type


def _configurations(data: pd.DataFrame) -> pd.Series:
    """Each trial's configuration (model and hash): the strata of the configuration fixed effect."""
    model = data["model"].astype(str) if "model" in data else pd.Series("", index=data.index)
    return model + (" " + data["config"].astype(str) if "config" in data else "")


def _sample_setting(data: pd.DataFrame) -> pd.Series:
    """Each trial's task arguments and data revisions (from ``config_contents``), as sorted JSON."""
    if "config_contents" not in data:
        return pd.Series("{}", index=data.index)

    def setting(contents: str) -> str:
        parsed = json.loads(contents)
        revisions = {f"{k} revision": v for k, v in parsed.get("data_revisions", {}).items()}
        return json.dumps({**parsed.get("task_args", {}), **revisions}, sort_keys=True)

    return data["config_contents"].astype(str).map(setting)


def _setting_labels(settings: list[str]) -> dict[str, str]:
    """Each setting as ``k=v, ...`` over the keys whose values differ between the settings."""
    parsed = {s: json.loads(s) for s in settings}
    keys = sorted({k for p in parsed.values() for k in p
                   if len({json.dumps(q.get(k)) for q in parsed.values()}) > 1})
    return {s: ", ".join(f"{k}={json.dumps(p.get(k)) if not isinstance(p.get(k), str) else p[k]}" for k in keys)
            for s, p in parsed.items()}


def _scope_frames(samples: pd.DataFrame) -> list[tuple[str, pd.DataFrame, str]]:
    """(scope, trials, why not fitted or ""): per benchmark and sample setting, and pooled."""
    setting = _sample_setting(samples)
    scopes: list[tuple[str, pd.DataFrame, str]] = []
    mixed: list[str] = []
    for benchmark, frame in samples.groupby("benchmark", sort=True):
        settings = sorted(set(setting[frame.index]))
        if len(settings) > 1:
            mixed.append(str(benchmark))
        labels = _setting_labels(settings)
        for s in settings:
            part = frame[setting[frame.index] == s]
            scopes.append((f"{benchmark} [{labels[s]}]" if len(settings) > 1 else str(benchmark), part, ""))
    if samples["benchmark"].nunique() > 1:
        why = (f"not fitted: {', '.join(mixed)} ran several sample settings (task arguments or data), "
               "which are never pooled") if mixed else ""
        scopes.append(("pooled", samples, why))
    return scopes


def holm(pvalues: pd.Series) -> pd.Series:
    """Holm's step-down adjusted p-values, same index: with the m p-values sorted ascending,
    ``p_(i) * (m - i + 1)`` made non-decreasing by a running maximum and capped at 1 (the same
    numbers as statsmodels' ``multipletests(method="holm")``, which forces a slow gc.collect)."""
    values = pvalues.to_numpy(dtype=float)
    order = np.argsort(values, kind="mergesort")
    m = len(values)
    adjusted = np.minimum(1.0, np.maximum.accumulate(values[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return pd.Series(out, index=pvalues.index, dtype=float)


def regressions(samples: pd.DataFrame, baseline_method: str = "all_at_once", se: str = "cluster") -> pd.DataFrame:
    """Every spec of the module docstring in every scope, as one long table (REGRESSION_COLUMNS).

    ``samples`` needs ``benchmark, case, protocol, method, quartile, n_agents, correct`` (and may
    carry ``outcome``, the score key ``correct`` holds, which is copied to each row). A spec that
    cannot be fitted (no trial with a quartile, a single outcome, no protocol contrast) gives one
    row with ``term = ""`` and the reason in ``note``.
    """
    if se not in ("cluster", "model"):
        raise ValueError(f"se must be 'cluster' or 'model', got {se!r}")
    needed = ["benchmark", "case", "protocol", "method", "quartile", "n_agents", "correct"]
    missing = [c for c in needed if c not in samples]
    if missing:
        raise ValueError(f"regressions need columns {missing}")
    data = samples.dropna(subset=["correct", "quartile"])
    rows: list[dict[str, object]] = []
    for scope, frame, why in _scope_frames(data):
        for spec in SPECS:
            part = frame[frame["quartile"].astype(int).isin(spec.quartiles)]
            rows.extend(_fit_rows(scope, spec, part, baseline_method, se, why))
    return pd.DataFrame(rows, columns=REGRESSION_COLUMNS)


def _outcome(part: pd.DataFrame) -> str:
    if "outcome" not in part or part.empty:
        return ""
    return ", ".join(sorted(set(part["outcome"].dropna().astype(str))))


def _fit_rows(scope: str, spec: Spec, part: pd.DataFrame, baseline_method: str, se: str,
              why: str = "") -> list[dict[str, object]]:
    def unavailable(reason: str) -> list[dict[str, object]]:
        return [{
            "scope": scope, "spec": spec.name, "outcome": _outcome(part), "term": "", "coef": np.nan,
            "se": np.nan, "odds_ratio": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan,
            "p_holm": np.nan, "family": "exploratory", "n": len(part),
            "n_cases": part[["benchmark", "case"]].drop_duplicates().shape[0] if len(part) else 0,
            "se_type": "", "note": reason,
        }]

    if why:
        return unavailable(why)
    if part.empty:
        return unavailable("not estimable: no trials with a quartile")
    if part["protocol"].nunique() < 2:
        return unavailable("not estimable: needs at least two protocols")
    if part["correct"].nunique() < 2:
        return unavailable("not estimable: every trial has the same outcome")
    reference = reference_protocol(part["protocol"].tolist(), part["method"].tolist(), baseline_method)
    X, notes = design_matrix(part, reference, spec.agents)
    if spec.agents and not any("n_agents" in c for c in X.columns):
        return unavailable(
            "not estimable: n_agents does not vary here (one system size), so the agents terms "
            "cannot be separated from the intercept"
        )
    groups = part["benchmark"].astype(str) + "/" + part["case"].astype(str)
    n_cases = groups.nunique()
    try:
        table, fit_notes, se_type = fit_logit(part["correct"], X, groups, se)
    except (np.linalg.LinAlgError, ValueError) as e:  # singular design the checks above missed
        return unavailable(f"not estimable: {type(e).__name__}: {e}")
    if se == "cluster" and n_cases < TOO_FEW_CASES:
        table[["ci_low", "ci_high", "p_value"]] = np.nan
        se_type = f"too few cases (G={n_cases} < {TOO_FEW_CASES}): no CI or p"
    elif se == "cluster" and n_cases < FEW_CASES:
        se_type += f"; few clusters (G={n_cases} < {FEW_CASES})"
    note = "; ".join([f"reference protocol {reference}", *notes, *fit_notes])
    table.insert(0, "outcome", _outcome(part))
    table.insert(0, "spec", spec.name)
    table.insert(0, "scope", scope)
    table["p_holm"] = np.nan
    table["family"] = "exploratory"
    table["n"] = len(part)
    table["n_cases"] = n_cases
    table["se_type"] = se_type
    table["note"] = note
    return table[REGRESSION_COLUMNS].to_dict("records")
