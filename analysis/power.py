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

M1's interaction power is :mod:`analysis.m1_power`; the ``blame power`` command :mod:`analysis.power_command`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from analysis._format import config_labels, short
from analysis.settings import with_setting

__all__ = [
    "ASSUMED_TAU", "M1_ESTIMAND", "MAX_CASES", "MAX_EPOCHS", "MAX_TAU", "NO_GAIN", "PLANNING", "POWER_COLUMNS",
    "Power", "SIMULATED_CASES", "SIMULATED_TRIALS", "assumption_problem", "detectable_gain", "gain_points",
    "power_from_samples", "power_markdown",
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

M1_ESTIMAND = (
    "M1's interaction odds ratio (`analysis.regressions`: no case term, standard errors clustered by case) is "
    "**population-averaged**: the odds ratio per quartile step of the accuracy averaged over the cases, not the "
    "one within a case. When cases differ in difficulty it is nearer 1 than the case-level one: a case-level "
    "odds ratio of 1.6 with a between-case SD of 1 (logit scale) at 54% baseline accuracy is a population-averaged "
    "1.48. `blame power --m1` simulates the power of its test (`analysis/m1_power.py`)."
)
"""The sentence every power table carries on what M1's odds ratio estimates."""


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


NO_GAIN = "no gain reaches 80% power"
"""What the table and ``blame power`` print where the search found no detectable gain (NaN with a ``power_from``)."""


def gain_points(gain: float) -> str:
    """A detectable gain in points: one decimal from 0.1 point, two significant digits below it (a
    gain of 0.0032 points at a million cases is not "0.0"), :data:`NO_GAIN` for NaN."""
    if gain != gain:
        return NO_GAIN
    return f"{gain:.1f}" if gain >= 0.1 else f"{gain:.2g}"


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
    scored = with_setting(samples[samples["correct"].notna() & (samples["method"] == baseline_method)])
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


def power_markdown(table: pd.DataFrame) -> str:
    """The power table (:func:`power_from_samples`) with the sentence on M1's estimand."""
    from analysis._format import DASH, markdown_table, number, pct

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
            "benchmark": table["benchmark"], "model": config_labels(table),
            "cases": table["cases"].astype(str), "epochs": table["epochs"].astype(str),
            "outcome": table["outcome"],
            "baseline %": table["baseline_accuracy"].map(pct), "tau": table["tau"].map(number),
            "tau from": table["tau_source"],
            "detectable gain (points)": [gain_points(g) if source else DASH
                                         for g, source in zip(table["detectable_gain_points"], table["power_from"])],
            "power from": table["power_from"],
        })
        parts.append(markdown_table(shown, align=["l", "l", "r", "r", "l", "r", "r", "l", "r", "l"], keep=2))
    return "\n".join(parts)
