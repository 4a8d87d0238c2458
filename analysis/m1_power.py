"""The power of M1's interaction (:func:`m1_power`, ``blame power --m1``): the power of the Wald test of M1's
``protocol x quartile`` term (``analysis.regressions``), by simulation. G cases are split over
the quartiles as equally as possible (case i of 0..G-1 has ``q = 1 + floor(4 i / G)``), case c
has ``u_c ~ N(0, tau^2)``, and each of the two protocols runs R times per case, with

    logit P(correct) = a + u_c + T log(OR) (q_c - 2.5),     T = 1 for the treatment, else 0,

``a = mu`` as above (the baseline's accuracy is the same in every quartile; the treatment's
effect is 0 between Q2 and Q3) and OR the **conditional** odds ratio per quartile step, i.e.
given the case. Each data set is fitted as the report fits M1 (``design_matrix`` and
``fit_logit``: CR3 standard errors clustered by case, t(G - 1); Firth on case-level cells, with
its LRT p, when the data separate or the ML fit does not converge); the power is the share of the
data sets with p < 0.05 (one with a single outcome or no finite standard error has no p and
counts as no rejection), with its exact (Clopper-Pearson) 95% Monte-Carlo interval. M1 pools
the trials with no case term, so its odds ratio is **population-averaged** (marginal over the
cases): its large-sample limit (``marginal_odds_ratio``) is the M1 fit to the expected cell
accuracies ``E_u[expit(...)]`` (64-node Gauss-Hermite), which for tau > 0 lies nearer 1 than
the conditional OR (1.48 for 1.6 at tau 1 and baseline 54%). The data sets are drawn from
``numpy.random.default_rng(seed)`` in a fixed order: a seed always gives the same numbers.
Ranges (:func:`m1_problem`): 10 cases (``regressions.TOO_FEW_CASES``: with fewer the report
prints no p) to :data:`M1_MAX_CASES`, 1 to :data:`M1_MAX_RUNS` runs, a baseline from 0.01 to
0.99, tau from 0 to :data:`MAX_TAU`, an OR from 0.1 to 10, :data:`M1_MIN_SIMULATIONS` to
:data:`M1_MAX_SIMULATIONS` simulations, and at most :data:`M1_MAX_WORK` simulated case-runs
(simulations x cases x runs).

The case-level simulation model, its quadrature and the planning entries are ``analysis.power``'s.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from analysis._format import config_labels
from analysis.power import (
    M1_ESTIMAND, _NODES, _WEIGHTS, ALPHA, ASSUMED_TAU, MAX_TAU, _baseline_configurations, _expit, _first_problem, _mu,
    _tau, _valid_integer, _valid_number,
)

__all__ = [
    "M1_BENCHMARK", "M1_COLUMNS", "M1_ESTIMAND", "M1_MAX_CASES", "M1_MAX_RUNS", "M1_MAX_SIMULATIONS", "M1_MAX_WORK",
    "M1_MIN_SIMULATIONS", "M1_ODDS_RATIO", "M1_SIMULATIONS", "M1Power", "m1_from_samples", "m1_line", "m1_markdown",
    "m1_option_problem", "m1_power", "m1_problem",
]

M1_SIMULATIONS, M1_MIN_SIMULATIONS, M1_MAX_SIMULATIONS = 500, 20, 2000
"""Default, fewest and most simulated data sets of :func:`m1_power`."""
M1_MAX_CASES, M1_MAX_RUNS, M1_MAX_WORK = 1000, 20, 500_000
"""The most cases, runs per case and protocol, and simulations x cases x runs :func:`m1_power` takes."""
M1_ODDS_RATIO = 1.6
"""The conditional interaction odds ratio ``blame power --m1`` assumes unless told (POIROT's reported M1 OR)."""
M1_BENCHMARK = "who_and_when/algorithm_generated"
"""Whose ``analysis.power.PLANNING`` cases and baseline ``blame power --m1`` assumes unless told."""
_M1_TERM = "protocol[treatment] x quartile"


@dataclass(frozen=True)
class M1Power:
    cases: int
    runs: int  # per case and protocol
    baseline_accuracy: float
    tau: float
    odds_ratio: float  # the conditional (given the case) interaction OR per quartile step, planted
    simulations: int
    seed: int
    power: float  # share of the data sets with M1's interaction p < 0.05
    power_low: float  # its exact 95% Monte-Carlo interval
    power_high: float
    marginal_odds_ratio: float  # the population-averaged OR M1 estimates (its large-sample limit)
    estimated_odds_ratio: float  # exp(mean estimated log OR) over the data sets with a finite estimate
    firth: int  # data sets fitted by Firth (separation or no ML convergence)
    no_p: int  # data sets without a p (a single outcome, or no finite standard error)
    seconds: float  # wall time of the fits (the one field a seed does not fix)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def m1_option_problem(odds_ratio: object, simulations: object, seed: object) -> str | None:
    """The first of the M1 options (OR, simulations, seed) outside its range, as a line; None when valid."""
    return _first_problem([
        ("--odds-ratio", odds_ratio, _valid_number(odds_ratio) and 0.1 <= odds_ratio <= 10, "a number from 0.1 to 10"),
        ("--simulations", simulations,
         _valid_integer(simulations) and M1_MIN_SIMULATIONS <= simulations <= M1_MAX_SIMULATIONS,
         f"an integer from {M1_MIN_SIMULATIONS} to {M1_MAX_SIMULATIONS:,}"),
        ("--seed", seed, _valid_integer(seed) and 0 <= seed < 2**63, "a non-negative integer below 2**63"),
    ])


def m1_problem(cases: object, runs: object, baseline_accuracy: object, tau: object, odds_ratio: object,
               simulations: object, seed: object) -> str | None:
    """The first of :func:`m1_power`'s arguments outside its range (module docstring), as a line
    naming the ``blame power`` option and its valid values; None when all are valid."""
    from analysis.regressions import TOO_FEW_CASES

    problem = _first_problem([
        ("--cases", cases, _valid_integer(cases) and TOO_FEW_CASES <= cases <= M1_MAX_CASES,
         f"an integer from {TOO_FEW_CASES} to {M1_MAX_CASES:,} with --m1"),
        ("--epochs", runs, _valid_integer(runs) and 1 <= runs <= M1_MAX_RUNS,
         f"an integer from 1 to {M1_MAX_RUNS} with --m1"),
        ("--baseline-accuracy", baseline_accuracy,
         _valid_number(baseline_accuracy) and 0.01 <= baseline_accuracy <= 0.99, "a proportion from 0.01 to 0.99 with --m1"),
        ("--tau", tau, _valid_number(tau) and 0 <= tau <= MAX_TAU, f"a finite number from 0 to {MAX_TAU:g} (logit scale)"),
    ]) or m1_option_problem(odds_ratio, simulations, seed)
    if problem:
        return problem
    work = simulations * cases * runs  # type: ignore[operator]
    if work > M1_MAX_WORK:
        return (f"--simulations {simulations} x --cases {cases} x --epochs {runs} = {work:,} simulated case-runs: "
                f"at most {M1_MAX_WORK:,} (give fewer simulations)")
    return None


def _quartiles(cases: int) -> np.ndarray:
    """Case i of 0..cases-1 in quartile ``1 + floor(4 i / cases)``: the cases split as equally as possible."""
    return 1 + (np.arange(cases) * 4) // cases


def _marginal_log_odds_ratio(mu: float, tau: float, log_or: float, counts: np.ndarray) -> float:
    """M1's interaction coefficient fitted to the expected accuracy of every (protocol, quartile)
    cell (weight: its cases), i.e. the population-averaged log OR the fit converges to (Newton)."""
    q = np.arange(1.0, 5.0)
    treated = np.r_[np.zeros(4), np.ones(4)]
    quartile = np.r_[q, q]
    expected = _expit(mu + tau * _NODES[None, :] + (treated * log_or * (quartile - 2.5))[:, None]) @ _WEIGHTS
    X = np.column_stack([np.ones(8), treated, quartile, treated * quartile])
    weight = np.r_[counts, counts].astype(float)
    beta = np.zeros(4)
    for _ in range(100):
        fitted = _expit(X @ beta)
        step = np.linalg.solve(X.T @ (X * (weight * fitted * (1 - fitted))[:, None]), X.T @ (weight * (expected - fitted)))
        beta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    return float(beta[3])


def _m1_simulations(cases: object, runs: object) -> int:
    """The default simulation count: :data:`M1_SIMULATIONS`, or fewer where the work bound needs it."""
    if isinstance(cases, int) and isinstance(runs, int) and cases > 0 and runs > 0:
        return max(M1_MIN_SIMULATIONS, min(M1_SIMULATIONS, M1_MAX_WORK // (cases * runs)))
    return M1_SIMULATIONS


def m1_power(cases: int = 126, runs: int = 1, baseline_accuracy: float = 0.54, tau: float = ASSUMED_TAU,
             odds_ratio: float = M1_ODDS_RATIO, simulations: int | None = None, seed: int | None = None) -> M1Power:
    """The simulated power of M1's interaction test (module docstring). ``simulations`` None is
    :data:`M1_SIMULATIONS`, or fewer where :data:`M1_MAX_WORK` needs it; ``seed`` None is
    ``analysis.significance.SEED``. Raises ValueError with :func:`m1_problem`'s line for an
    argument out of range."""
    import time
    import warnings

    from scipy.stats import binomtest

    from analysis.regressions import design_matrix, fit_logit
    from analysis.significance import SEED

    seed = SEED if seed is None else seed
    simulations = _m1_simulations(cases, runs) if simulations is None else simulations
    problem = m1_problem(cases, runs, baseline_accuracy, tau, odds_ratio, simulations, seed)
    if problem:
        raise ValueError(problem)
    mu, log_or = _mu(baseline_accuracy, tau), math.log(odds_ratio)
    quartile = _quartiles(cases)
    case = np.repeat(np.arange(cases), 2 * runs)
    treated = np.tile(np.r_[np.zeros(runs), np.ones(runs)], cases)
    trials = pd.DataFrame({"case": case, "quartile": quartile[case],
                           "protocol": np.where(treated == 1, "treatment", "all_at_once")})
    X, _ = design_matrix(trials, "all_at_once", agents=False)  # the same design for every data set
    shift = treated * log_or * (quartile[case] - 2.5)
    rng = np.random.default_rng(seed)
    rejected = firth = no_p = 0
    estimates: list[float] = []
    start = time.perf_counter()
    for _ in range(simulations):
        u = tau * rng.standard_normal(cases)
        y = pd.Series((rng.random(len(case)) < _expit(mu + u[case] + shift)).astype(float))
        if y.nunique() < 2:
            no_p += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a non-positive CR3 variance: no p, counted
            table, notes, _ = fit_logit(y, X, trials["case"], "cluster")
        row = table.set_index("term").loc[_M1_TERM]
        firth += bool(notes)
        if math.isfinite(row["coef"]):
            estimates.append(float(row["coef"]))
        if not math.isfinite(row["p_value"]):
            no_p += 1
        elif row["p_value"] < ALPHA:
            rejected += 1
    seconds = time.perf_counter() - start
    interval = binomtest(rejected, simulations).proportion_ci(0.95, method="exact")
    marginal = _marginal_log_odds_ratio(mu, tau, log_or, np.bincount(quartile, minlength=5)[1:])
    return M1Power(cases, runs, baseline_accuracy, tau, odds_ratio, simulations, seed, rejected / simulations,
                   float(interval.low), float(interval.high), math.exp(marginal),
                   math.exp(float(np.mean(estimates))) if estimates else float("nan"), firth, no_p, seconds)


M1_COLUMNS = ["benchmark", "outcome", "model", "config", "setting", "cases", "runs", "baseline_accuracy", "tau",
              "tau_source", "odds_ratio", "simulations", "power", "power_low", "power_high", "marginal_odds_ratio",
              "firth", "no_p", "note"]


def m1_from_samples(samples: pd.DataFrame, baseline_method: str = "all_at_once", odds_ratio: float = M1_ODDS_RATIO,
                    simulations: int | None = None, seed: int | None = None) -> pd.DataFrame:
    """M1_COLUMNS per benchmark and configuration of the baseline method: :func:`m1_power` at the
    size of its scored trials with a quartile (cases, the median runs, the mean case mean, tau as
    in :func:`power_from_samples`) for the conditional ``odds_ratio``; ``note`` says why a row has no
    power. Raises ValueError with :func:`m1_option_problem`'s line for an option out of range."""
    from analysis.regressions import TOO_FEW_CASES

    problem = m1_option_problem(odds_ratio, M1_SIMULATIONS if simulations is None else simulations,
                                0 if seed is None else seed)
    if problem:
        raise ValueError(problem)
    rows = []
    with_quartile = samples[samples["quartile"].notna()] if "quartile" in samples else samples.iloc[:0]
    for keys, per_case in _baseline_configurations(with_quartile, baseline_method):
        cases, runs, baseline = len(per_case), int(per_case["size"].median()), float(per_case["mean"].mean())
        tau, source = _tau(per_case, baseline) if 0 < baseline < 1 and cases >= 2 else (np.nan, "")
        row: dict[str, object] = {**keys, "cases": cases, "runs": runs, "baseline_accuracy": baseline, "tau": tau,
                                  "tau_source": source, "odds_ratio": odds_ratio, "simulations": 0, "power": np.nan,
                                  "power_low": np.nan, "power_high": np.nan, "marginal_odds_ratio": np.nan,
                                  "firth": 0, "no_p": 0, "note": ""}
        count = _m1_simulations(cases, runs) if simulations is None else simulations
        if m1_problem(cases, runs, baseline, tau, odds_ratio, count, 0 if seed is None else seed):
            row["note"] = (f"no estimate: needs {TOO_FEW_CASES}-{M1_MAX_CASES:,} cases, 1-{M1_MAX_RUNS} runs, a "
                           f"baseline of 1-99% and at most {M1_MAX_WORK:,} simulations x cases x runs")
        else:
            result = m1_power(cases, runs, baseline, tau, odds_ratio, count, seed)
            row.update(simulations=count, power=result.power, power_low=result.power_low, power_high=result.power_high,
                       marginal_odds_ratio=result.marginal_odds_ratio, firth=result.firth, no_p=result.no_p)
        rows.append(row)
    return pd.DataFrame(rows, columns=M1_COLUMNS)


def m1_line(result: M1Power) -> str:
    """:func:`m1_power`'s result in two deterministic lines: the power, then the OR M1 estimates (no wall time)."""
    rejected = round(result.power * result.simulations)
    return (f"M1 protocol x quartile, {result.cases} cases x {result.runs} run(s) per protocol, baseline "
            f"{100 * result.baseline_accuracy:.1f}%, tau {result.tau:g}, case-level OR {result.odds_ratio:g} per "
            f"quartile step: power {100 * result.power:.1f}% (95% interval {100 * result.power_low:.1f}-"
            f"{100 * result.power_high:.1f}; p < 0.05 in {rejected} of {result.simulations} simulated data sets, "
            f"seed {result.seed})\nM1 estimates the population-averaged OR, {result.marginal_odds_ratio:.2f} here "
            f"(estimated: {result.estimated_odds_ratio:.2f}, geometric mean); Firth fits {result.firth}, no p "
            f"{result.no_p}")


def m1_markdown(m1: pd.DataFrame) -> str:
    from analysis._format import markdown_table, number, pct

    head = ("## Power of M1's interaction\n\nPer benchmark and configuration of the baseline, at the size of its "
            "trials with a complexity quartile: the share of simulated data sets in which M1's protocol x quartile "
            "test (CR3 by case, t(G - 1)) has p < 0.05 when a treatment's case-level odds ratio grows by the "
            "given factor per quartile step, with its 95% Monte-Carlo interval, and the population-averaged odds "
            "ratio M1 estimates then (module docstring of `analysis/power.py`).\n")
    if m1.empty:
        return head + "\nNo baseline trial has a quartile.\n"
    shown = pd.DataFrame({
        "benchmark": m1["benchmark"], "model": config_labels(m1), "cases": m1["cases"].astype(str),
        "runs": m1["runs"].astype(str), "baseline %": m1["baseline_accuracy"].map(pct),
        "tau": m1["tau"].map(number), "tau from": m1["tau_source"], "case-level OR": m1["odds_ratio"].map(number),
        "power %": [f"{pct(p)} [{pct(lo)}, {pct(hi)}]" if p == p else note
                    for p, lo, hi, note in zip(m1["power"], m1["power_low"], m1["power_high"], m1["note"])],
        "population-averaged OR": m1["marginal_odds_ratio"].map(number),
        "simulations": m1["simulations"].astype(str), "Firth fits": m1["firth"].astype(str),
    })
    return head + "\n" + markdown_table(shown, align=["l", "l", "r", "r", "r", "r", "l", "r", "l", "r", "r", "r"], keep=2)
