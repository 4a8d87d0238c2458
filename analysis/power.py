"""Power of Table 1's paired case-level test: the smallest gain it detects (``blame power``).

Model (the one the simulation tests plant): case c has baseline log-odds ``mu + u_c`` with
``u_c ~ N(0, tau^2)`` (between-case variation), the treatment adds ``delta`` on the logit scale,
and each protocol runs ``E`` replicates (epochs) per case. The per-case difference of means
``d_c`` then has

- mean ``Delta(delta) = E_u[expit(mu + u + delta) - expit(mu + u)]`` (the gain, as a proportion),
- variance ``Var_u[expit(mu + u + delta) - expit(mu + u)] + E_u[p_T (1 - p_T) + p_B (1 - p_B)] / E``,

both by 64-node Gauss-Hermite quadrature over u; ``mu`` is set so that ``E_u[expit(mu + u)]``
equals the baseline accuracy. The **minimum detectable gain** is ``100 Delta(delta*)`` points,
with delta* the smallest delta >= 0 at which the exact sign-flip test (alpha 0.05, two-sided)
rejects in 80% of :data:`POWER_REPS` data sets simulated from the model (seeded; the same
uniforms for every delta, so the estimated power rises with delta), found by bisection. The
search starts from the noncentral-t power of the one-sample t test on the ``d_c`` (G - 1 df),
which is optimistic for the discrete exact test at these sizes (it claims 80% where the exact
test has about 71% at 15 cases x 3 epochs); the search stops within 0.05 points. NaN when no gain reaches 80%.
Above :data:`SIMULATED_CASES` cases or :data:`SIMULATED_TRIALS` trials per side (cases x
epochs) the simulation's cost (about cases^2 x epochs) is not paid and the noncentral-t figure is
the answer (``Power.simulated`` False); it is then at least 8 cases, where it is close: measured
against the simulation, 0.1 points lower at 8 cases x 75 epochs and at 600 and 1,000 cases x 1
epoch, 0.2 at 20 cases x 30 epochs (at 6 cases x 100 epochs it would be 2.4 lower).

Ranges (:func:`assumption_problem`, enforced by :func:`detectable_gain`): 2 to :data:`MAX_CASES`
cases, 1 to :data:`MAX_EPOCHS` epochs, a baseline accuracy from 0.001 to 0.999 and a finite tau
from 0 to :data:`MAX_TAU`.

From logs (:func:`power_from_samples`), per benchmark and configuration of the baseline method:
G = cases, E = the median replicate count, baseline accuracy = the mean case mean, and tau from
the between-case variance of the case means, ``var(m_c) - mean(m_c (1 - m_c) / (n_c - 1))``
(the binomial within-case part removed), matched to the model's ``Var_u[expit(mu + u)]``. With a
single replicate that variance is not identifiable and tau = :data:`ASSUMED_TAU` is assumed (the
table says which).

Before any log (:data:`PLANNING`, ``blame power --benchmark NAME``): each benchmark's case count
and an assumed baseline agent accuracy (vector exact match on BLAME), with where the assumption
comes from; ``docs/statistics.md`` prints the table they give.

**M1's interaction** (:func:`m1_power`, ``blame power --m1``): the power of the Wald test of M1's
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
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from analysis._format import short

__all__ = [
    "ASSUMED_TAU", "M1_BENCHMARK", "M1_COLUMNS", "M1_ESTIMAND", "M1_MAX_CASES", "M1_MAX_RUNS", "M1_MAX_SIMULATIONS",
    "M1_MAX_WORK", "M1_MIN_SIMULATIONS", "M1_ODDS_RATIO", "M1_SIMULATIONS", "MAX_CASES", "MAX_EPOCHS", "MAX_TAU",
    "PLANNING", "POWER_COLUMNS", "M1Power", "Power", "PowerError", "SIMULATED_CASES", "SIMULATED_TRIALS",
    "assumption_problem", "detectable_gain", "m1_from_samples", "m1_line", "m1_option_problem", "m1_power",
    "m1_problem", "power_command", "power_from_samples", "power_markdown",
]

ASSUMED_TAU = 1.0
"""Between-case SD on the logit scale assumed when the logs cannot estimate it."""
ALPHA, TARGET = 0.05, 0.80
PLANNING: dict[str, tuple[int, float, str]] = {
    "blame/cortex": (15, 0.30, "assumed (no published all-at-once exact match)"),
    "blame/trading": (6, 0.30, "assumed (no published all-at-once exact match)"),
    "who_and_when/algorithm_generated": (126, 0.54, "Who&When paper, all-at-once agent accuracy (AG)"),
    "who_and_when/hand_crafted": (58, 0.55, "Who&When paper, all-at-once agent accuracy (HC)"),
    "agentrx/magentic_one": (44, 0.55, "the same sessions' Who&When all-at-once agent accuracy (HC)"),
    "agentrx/tau_retail": (29, 0.724, "the always-assistant floor: 21 of 29 root causes are the assistant's"),
}
"""Benchmark -> (cases, assumed baseline accuracy, its source), for planning before any log."""
POWER_REPS = 1000
SIMULATED_CASES, SIMULATED_TRIALS = 200, 700
"""Cases, and cases x epochs, up to which the exact test's power is simulated; above, the noncentral-t power."""
MAX_CASES, MAX_EPOCHS, MAX_TAU = 1_000_000, 100, 20.0
"""The largest case count, epoch count and tau that ``blame power`` and :func:`detectable_gain` take."""
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(64)
_WEIGHTS = _WEIGHTS / math.sqrt(2 * math.pi)

POWER_COLUMNS = ["benchmark", "outcome", "model", "config", "setting", "cases", "epochs", "baseline_accuracy", "tau",
                 "tau_source", "detectable_gain_points", "power_from"]


@dataclass(frozen=True)
class Power:
    cases: int
    epochs: int
    baseline_accuracy: float
    tau: float
    detectable_gain_points: float
    simulated: bool = True

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _mu(baseline: float, tau: float) -> float:
    from scipy.optimize import brentq

    reach = 40 + 15 * tau  # beyond the widest quadrature node: the mean accuracy spans (0, 1)
    return float(brentq(lambda m: float(_WEIGHTS @ _expit(m + tau * _NODES)) - baseline, -reach, reach))


def _moments(mu: float, tau: float, delta: float, epochs: int) -> tuple[float, float]:
    p_b = _expit(mu + tau * _NODES)
    p_t = _expit(mu + tau * _NODES + delta)
    diff = p_t - p_b
    mean = float(_WEIGHTS @ diff)
    between = float(_WEIGHTS @ (diff - mean) ** 2)
    within = float(_WEIGHTS @ (p_t * (1 - p_t) + p_b * (1 - p_b))) / epochs
    return mean, between + within


def _power(mu: float, tau: float, delta: float, cases: int, epochs: int) -> float:
    from scipy import stats

    mean, variance = _moments(mu, tau, delta, epochs)
    if variance <= 0:
        return 1.0 if mean > 0 else 0.0
    df = cases - 1
    crit = float(stats.t.ppf(1 - ALPHA / 2, df))
    nc = math.sqrt(cases) * mean / math.sqrt(variance)
    if nc > 40:  # nct's tails lose precision there; the power is 1 to many digits
        return 1.0
    power = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
    if math.isnan(power):  # nct's far tail can be NaN; the normal limit is exact to many digits there
        power = float(stats.norm.sf(crit - nc) + stats.norm.cdf(-crit - nc))
    return power


def _valid_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _valid_integer(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _first_problem(checks: list[tuple[str, object, bool, str]]) -> str | None:
    for option, value, valid, expected in checks:
        if not valid:
            return f"{option} {short(str(value))}: must be {expected}"
    return None


def assumption_problem(cases: object, epochs: object, baseline_accuracy: object, tau: object) -> str | None:
    """The first of ``blame power``'s assumptions outside its range (module docstring), as a line
    naming the option and its valid values; None when all are valid."""
    return _first_problem([
        ("--cases", cases, _valid_integer(cases) and 2 <= cases <= MAX_CASES, f"an integer from 2 to {MAX_CASES:,}"),
        ("--epochs", epochs, _valid_integer(epochs) and 1 <= epochs <= MAX_EPOCHS,
         f"an integer from 1 to {MAX_EPOCHS:,}"),
        ("--baseline-accuracy", baseline_accuracy,
         _valid_number(baseline_accuracy) and 0.001 <= baseline_accuracy <= 0.999, "a proportion from 0.001 to 0.999"),
        ("--tau", tau, _valid_number(tau) and 0 <= tau <= MAX_TAU, f"a finite number from 0 to {MAX_TAU:g} (logit scale)"),
    ])


def detectable_gain(cases: int, epochs: int, baseline_accuracy: float, tau: float = ASSUMED_TAU) -> Power:
    """The minimum gain in points detected with 80% power at alpha 0.05 (module docstring); raises
    ValueError with :func:`assumption_problem`'s line for an argument out of range."""
    from scipy.optimize import brentq

    problem = assumption_problem(cases, epochs, baseline_accuracy, tau)
    if problem:
        raise ValueError(problem)
    mu = _mu(baseline_accuracy, tau)
    top = 0.25
    while _power(mu, tau, top, cases, epochs) < TARGET:
        top *= 2
        if top > 16:  # even near-certain success of the treatment does not reach 80% power
            return Power(cases, epochs, baseline_accuracy, tau, float("nan"))
    start = brentq(lambda d: _power(mu, tau, d, cases, epochs) - TARGET, 0.0, top, xtol=1e-6)
    if cases > SIMULATED_CASES or cases * epochs > SIMULATED_TRIALS:
        return Power(cases, epochs, baseline_accuracy, tau, 100 * _moments(mu, tau, start, epochs)[0], simulated=False)
    uniforms = _uniforms(cases, epochs, tau)
    low, high = 0.0, start
    while _simulated_power(mu, high, uniforms) < TARGET:
        low, high = high, 2 * high + 0.1
        if high > 16:
            return Power(cases, epochs, baseline_accuracy, tau, float("nan"))
    while 100 * (_moments(mu, tau, high, epochs)[0] - _moments(mu, tau, low, epochs)[0]) > 0.05:
        middle = (low + high) / 2
        low, high = (middle, high) if _simulated_power(mu, middle, uniforms) < TARGET else (low, middle)
    return Power(cases, epochs, baseline_accuracy, tau, 100 * _moments(mu, tau, high, epochs)[0])


def _uniforms(cases: int, epochs: int, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from analysis.significance import SEED

    rng = np.random.default_rng(SEED)
    return (tau * rng.standard_normal((POWER_REPS, cases, 1)), rng.random((POWER_REPS, cases, epochs)),
            rng.random((POWER_REPS, cases, epochs)))


def _simulated_power(mu: float, delta: float, uniforms: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
    """Share of the simulated data sets in which the exact sign-flip test rejects at ALPHA."""
    from analysis.significance import sign_flip_exact_batch

    u, draw_t, draw_b = uniforms
    units = (draw_t < _expit(mu + u + delta)).sum(axis=2) - (draw_b < _expit(mu + u)).sum(axis=2)
    return float(np.mean(sign_flip_exact_batch(units) < ALPHA))


def _tau_from_case_means(means: np.ndarray, counts: np.ndarray, baseline: float) -> float:
    """Logit-scale tau whose Var_u[expit(mu + u)] matches the between-case variance (0 if none)."""
    from scipy.optimize import brentq

    between = float(np.var(means, ddof=1) - np.mean(means * (1 - means) / (counts - 1)))
    if between <= 0:
        return 0.0

    def excess(tau: float) -> float:
        mu = _mu(baseline, tau)
        p = _expit(mu + tau * _NODES)
        return float(_WEIGHTS @ (p - baseline) ** 2) - between

    if excess(20.0) < 0:
        return 20.0
    return float(brentq(excess, 0.0, 20.0, xtol=1e-6))


def _baseline_configurations(samples: pd.DataFrame, baseline_method: str) -> list[tuple[dict[str, object], pd.DataFrame]]:
    """Per benchmark and configuration of the baseline's scored trials: the row's keys (benchmark,
    outcome, model, config, setting; setting "" when the frame has none) and the per-case ``mean``
    and ``size``."""
    scored = samples[samples["correct"].notna() & (samples["method"] == baseline_method)]
    scored = scored.assign(setting=scored["setting"].fillna("").astype(str) if "setting" in scored else "")
    out = []
    for (benchmark, model, config, setting), frame in scored.groupby(["benchmark", "model", "config", "setting"],
                                                                     sort=True):
        outcome = ", ".join(sorted(set(frame["outcome"].dropna().astype(str)))) if "outcome" in frame else ""
        keys = {"benchmark": benchmark, "outcome": outcome, "model": model, "config": config, "setting": setting}
        out.append((keys, frame.groupby("case")["correct"].agg(["mean", "size"])))
    return out


def _tau(per_case: pd.DataFrame, baseline: float) -> tuple[float, str]:
    """tau and where it comes from: estimated from the replicates, else assumed (module docstring)."""
    if (per_case["size"] >= 2).all() and len(per_case) >= 3:
        return _tau_from_case_means(per_case["mean"].to_numpy(), per_case["size"].to_numpy(), baseline), "estimated"
    return ASSUMED_TAU, "assumed (one replicate)"


def power_from_samples(samples: pd.DataFrame, baseline_method: str = "all_at_once") -> pd.DataFrame:
    """POWER_COLUMNS per benchmark and configuration of the baseline method (module docstring)."""
    rows = []
    for keys, per_case in _baseline_configurations(samples, baseline_method):
        cases, epochs = len(per_case), int(per_case["size"].median())
        baseline = float(per_case["mean"].mean())
        row = {**keys, "cases": cases, "epochs": epochs, "baseline_accuracy": baseline, "tau": np.nan,
               "tau_source": "", "detectable_gain_points": np.nan, "power_from": ""}
        if 2 <= cases <= MAX_CASES and epochs <= MAX_EPOCHS and 0.001 <= baseline <= 0.999:
            tau, source = _tau(per_case, baseline)
            power = detectable_gain(cases, epochs, baseline, tau)
            row.update(tau=tau, tau_source=source, detectable_gain_points=power.detectable_gain_points,
                       power_from="simulation" if power.simulated else "t approximation")
        else:
            row["tau_source"] = (f"no estimate: fewer than 2 or more than {MAX_CASES:,} cases, more than "
                                 f"{MAX_EPOCHS:,} epochs, or baseline accuracy outside 0.1-99.9%")
        rows.append(row)
    return pd.DataFrame(rows, columns=POWER_COLUMNS)


M1_SIMULATIONS, M1_MIN_SIMULATIONS, M1_MAX_SIMULATIONS = 500, 20, 2000
"""Default, fewest and most simulated data sets of :func:`m1_power`."""
M1_MAX_CASES, M1_MAX_RUNS, M1_MAX_WORK = 1000, 20, 500_000
"""The most cases, runs per case and protocol, and simulations x cases x runs :func:`m1_power` takes."""
M1_ODDS_RATIO = 1.6
"""The conditional interaction odds ratio ``blame power --m1`` assumes unless told (POIROT's reported M1 OR)."""
M1_BENCHMARK = "who_and_when/algorithm_generated"
"""Whose :data:`PLANNING` cases and baseline ``blame power --m1`` assumes unless told."""
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


M1_ESTIMAND = (
    "M1's interaction odds ratio (`analysis.regressions`: no case term, standard errors clustered by case) is "
    "**population-averaged**: the odds ratio per quartile step of the accuracy averaged over the cases, not the "
    "one within a case. When cases differ in difficulty it is nearer 1 than the case-level one: a case-level "
    "odds ratio of 1.6 with a between-case SD of 1 (logit scale) at 54% baseline accuracy is a population-averaged "
    "1.48. `blame power --m1` simulates the power of its test (`analysis/power.py`)."
)
"""The sentence every power table carries on what M1's odds ratio estimates."""


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


def _shown_configuration(table: pd.DataFrame) -> list[str]:
    from analysis._format import config_label

    settings = table["setting"] if "setting" in table else pd.Series("", index=table.index)
    return [config_label(m, c, s) for m, c, s in zip(table["model"], table["config"], settings)]


def power_markdown(table: pd.DataFrame, m1: pd.DataFrame | None = None) -> str:
    """The power table (:func:`power_from_samples`) with M1's estimand, and ``m1``
    (:func:`m1_from_samples`) as a second table when given."""
    from analysis._format import markdown_table, number, pct

    parts = [
        "# Power: the smallest gain Table 1's test detects\n",
        "Per benchmark and configuration of the baseline: the gain in points that the paired "
        "case-level test detects with 80% power at alpha 0.05, for these cases and epochs, from the "
        "baseline accuracy and the between-case SD tau (logit scale) in the logs. A smaller true gain "
        "cannot reliably be told apart from none. Power from the simulated exact test up to "
        f"{SIMULATED_CASES} cases and {SIMULATED_TRIALS} cases x epochs, else the t approximation. "
        "Model: `analysis/power.py`.\n",
        M1_ESTIMAND + "\n",
    ]
    if table.empty:
        parts.append("No baseline trials.\n")
    else:
        shown = pd.DataFrame({
            "benchmark": table["benchmark"], "model": _shown_configuration(table),
            "cases": table["cases"].astype(str), "epochs": table["epochs"].astype(str),
            "outcome": table["outcome"],
            "baseline %": table["baseline_accuracy"].map(pct), "tau": table["tau"].map(number),
            "tau from": table["tau_source"],
            "detectable gain (points)": table["detectable_gain_points"].map(lambda x: number(x, 1)),
            "power from": table["power_from"],
        })
        parts.append(markdown_table(shown, align=["l", "l", "r", "r", "l", "r", "r", "l", "r", "l"], keep=2))
    if m1 is not None:
        parts.append(_m1_markdown(m1))
    return "\n".join(parts)


def _m1_markdown(m1: pd.DataFrame) -> str:
    from analysis._format import markdown_table, number, pct

    head = ("## Power of M1's interaction\n\nPer benchmark and configuration of the baseline, at the size of its "
            "trials with a complexity quartile: the share of simulated data sets in which M1's protocol x quartile "
            "test (CR3 by case, t(G - 1)) has p < 0.05 when a treatment's case-level odds ratio grows by the "
            "given factor per quartile step, with its 95% Monte-Carlo interval, and the population-averaged odds "
            "ratio M1 estimates then (module docstring of `analysis/power.py`).\n")
    if m1.empty:
        return head + "\nNo baseline trial has a quartile.\n"
    shown = pd.DataFrame({
        "benchmark": m1["benchmark"], "model": _shown_configuration(m1), "cases": m1["cases"].astype(str),
        "runs": m1["runs"].astype(str), "baseline %": m1["baseline_accuracy"].map(pct),
        "tau": m1["tau"].map(number), "tau from": m1["tau_source"], "case-level OR": m1["odds_ratio"].map(number),
        "power %": [f"{pct(p)} [{pct(lo)}, {pct(hi)}]" if p == p else note
                    for p, lo, hi, note in zip(m1["power"], m1["power_low"], m1["power_high"], m1["note"])],
        "population-averaged OR": m1["marginal_odds_ratio"].map(number),
        "simulations": m1["simulations"].astype(str), "Firth fits": m1["firth"].astype(str),
    })
    return head + "\n" + markdown_table(shown, align=["l", "l", "r", "r", "r", "r", "l", "r", "l", "r", "r", "r"], keep=2)


class PowerError(ValueError):
    """What ``blame power`` refuses: a line naming the argument and its valid values."""


def power_command(log_dir: str | None, baseline_method: str | None, cases: int | None, epochs: int | None,
                  baseline_accuracy: float | None, tau: float | None, benchmark: str | None = None, m1: bool = False,
                  odds_ratio: float | None = None, simulations: int | None = None, seed: int | None = None) -> int:
    """``blame power``: the table from LOG_DIR, or one line from stated assumptions (``benchmark``:
    a :data:`PLANNING` entry's cases and baseline, unless given); with ``m1`` the power of M1's
    interaction (:func:`m1_power`: from assumptions, default :data:`M1_BENCHMARK`'s; from LOG_DIR,
    :func:`m1_from_samples`) and its wall time on stderr. Exit status. ``None`` is an option not
    given. What it cannot answer (an option out of range, assumptions beside LOG_DIR, an M1 option
    without ``m1``, a log folder with no usable log or without the baseline's scored trials) is one
    line on stderr and exit status 1."""
    import time

    m1_options = {"--odds-ratio": odds_ratio, "--simulations": simulations, "--seed": seed}
    start = time.perf_counter()
    try:
        stray = [option for option, value in m1_options.items() if value is not None]
        if stray and not m1:
            raise PowerError(f"{', '.join(stray)}: only with --m1 (the power of M1's interaction)")
        if log_dir is not None:
            lines = [_from_logs(log_dir, baseline_method, cases, epochs, baseline_accuracy, tau, benchmark,
                                m1, odds_ratio, simulations, seed)]
        elif m1:
            lines = _m1_from_assumptions(baseline_method, cases, epochs, baseline_accuracy, tau, benchmark,
                                         odds_ratio, simulations, seed)
        else:
            lines = _from_assumptions(baseline_method, cases, epochs, baseline_accuracy, tau, benchmark)
    except PowerError as error:
        print(f"blame power: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    if m1:
        print(f"blame power: the M1 simulations took {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _planned(baseline_method: str | None, cases: int | None, baseline_accuracy: float | None,
             benchmark: str | None) -> tuple[int | None, float, list[str]]:
    """Cases and baseline accuracy from the options and ``benchmark``'s :data:`PLANNING` entry
    (baseline 0.5 when neither gives one), and the line saying where a planned baseline comes from."""
    if baseline_method is not None:
        raise PowerError("--baseline names the baseline method in LOG_DIR's logs; without LOG_DIR give "
                         "--baseline-accuracy")
    lines = []
    if benchmark is not None:
        if benchmark not in PLANNING:
            raise PowerError(f"--benchmark {short(benchmark)!r}: valid: {', '.join(PLANNING)}")
        planned, assumed, source = PLANNING[benchmark]
        cases = planned if cases is None else cases
        if baseline_accuracy is None:
            lines.append(f"{benchmark}: {planned} cases, baseline {100 * assumed:.1f}% from {source}")
            baseline_accuracy = assumed
    return cases, 0.5 if baseline_accuracy is None else baseline_accuracy, lines


def _from_assumptions(baseline_method: str | None, cases: int | None, epochs: int | None,
                      baseline_accuracy: float | None, tau: float | None, benchmark: str | None) -> list[str]:
    cases, baseline_accuracy, lines = _planned(baseline_method, cases, baseline_accuracy, benchmark)
    if cases is None:
        raise PowerError("give LOG_DIR, --benchmark NAME or --cases N (with --epochs, --baseline-accuracy, --tau)")
    epochs = 1 if epochs is None else epochs
    tau = ASSUMED_TAU if tau is None else tau
    problem = assumption_problem(cases, epochs, baseline_accuracy, tau)
    if problem:
        raise PowerError(problem)
    power = detectable_gain(cases, epochs, baseline_accuracy, tau)
    gain = power.detectable_gain_points
    lines.append(f"{cases} cases x {epochs} epochs, baseline {100 * baseline_accuracy:.1f}%, tau {tau:g}: "
                 + (f"a gain below {gain:.1f} points cannot be told apart (80% power, alpha 0.05)"
                    if gain == gain else "no gain reaches 80% power")
                 + ("" if power.simulated else f" (t approximation: over {SIMULATED_CASES} cases or "
                                               f"{SIMULATED_TRIALS} cases x epochs)"))
    return lines


def _m1_from_assumptions(baseline_method: str | None, cases: int | None, runs: int | None,
                         baseline_accuracy: float | None, tau: float | None, benchmark: str | None,
                         odds_ratio: float | None, simulations: int | None, seed: int | None) -> list[str]:
    if benchmark is None and cases is None:
        benchmark = M1_BENCHMARK
    cases, baseline_accuracy, lines = _planned(baseline_method, cases, baseline_accuracy, benchmark)
    runs = 1 if runs is None else runs
    tau = ASSUMED_TAU if tau is None else tau
    odds_ratio = M1_ODDS_RATIO if odds_ratio is None else odds_ratio
    try:
        lines.append(m1_line(m1_power(cases, runs, baseline_accuracy, tau, odds_ratio, simulations, seed)))
    except ValueError as error:
        raise PowerError(str(error)) from error
    return lines


def _from_logs(log_dir: str, baseline_method: str | None, cases: int | None, epochs: int | None,
               baseline_accuracy: float | None, tau: float | None, benchmark: str | None, m1: bool = False,
               odds_ratio: float | None = None, simulations: int | None = None, seed: int | None = None) -> str:
    from analysis.complexity import add_complexity, complexity_frame
    from analysis.logdir import LogDirError, read_usable_logs
    from analysis.outcomes import OutcomeError, choose_outcomes

    assumptions = {"--benchmark": benchmark, "--cases": cases, "--epochs": epochs,
                   "--baseline-accuracy": baseline_accuracy, "--tau": tau}
    given = [option for option, value in assumptions.items() if value is not None]
    if given:
        raise PowerError(f"{', '.join(given)} and LOG_DIR conflict: from logs, the cases, epochs, baseline accuracy "
                         "and tau are the logs'; give LOG_DIR or the assumptions, not both")
    try:
        samples, _ = choose_outcomes(read_usable_logs(log_dir, progress=None).samples, {})
    except (LogDirError, OutcomeError) as error:
        raise PowerError(str(error)) from error
    method = "all_at_once" if baseline_method is None else baseline_method
    methods = sorted(set(samples["method"].astype(str)))
    if method not in methods:
        raise PowerError(f"--baseline {short(method)}: no such method in these logs (present: {', '.join(methods)})")
    table = power_from_samples(samples, method)
    if table.empty:
        raise PowerError(f"--baseline {method}: no scored trial in these logs (each errored or its task has no "
                         "per-sample outcome)")
    if not m1:
        return power_markdown(table)
    with_quartiles = add_complexity(samples, complexity_frame(samples, []))
    try:
        m1_table = m1_from_samples(with_quartiles, method, M1_ODDS_RATIO if odds_ratio is None else odds_ratio,
                                   simulations, seed)
    except ValueError as error:
        raise PowerError(str(error)) from error
    return power_markdown(table, m1_table)
