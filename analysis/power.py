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

From logs (:func:`power_from_samples`), per benchmark and configuration of the baseline method:
G = cases, E = the median replicate count, baseline accuracy = the mean case mean, and tau from
the between-case variance of the case means, ``var(m_c) - mean(m_c (1 - m_c) / (n_c - 1))``
(the binomial within-case part removed), matched to the model's ``Var_u[expit(mu + u)]``. With a
single replicate that variance is not identifiable and tau = :data:`ASSUMED_TAU` is assumed (the
table says which).

Before any log (:data:`PLANNING`, ``blame power --benchmark NAME``): each benchmark's case count
and an assumed baseline agent accuracy (vector exact match on BLAME), with where the assumption
comes from; ``docs/statistics.md`` prints the table they give.
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ASSUMED_TAU", "PLANNING", "POWER_COLUMNS", "Power", "detectable_gain", "power_command", "power_from_samples",
    "power_markdown",
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
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(64)
_WEIGHTS = _WEIGHTS / math.sqrt(2 * math.pi)

POWER_COLUMNS = ["benchmark", "outcome", "model", "config", "cases", "epochs", "baseline_accuracy", "tau", "tau_source",
                 "detectable_gain_points"]


@dataclass(frozen=True)
class Power:
    cases: int
    epochs: int
    baseline_accuracy: float
    tau: float
    detectable_gain_points: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _mu(baseline: float, tau: float) -> float:
    from scipy.optimize import brentq

    return float(brentq(lambda m: float(_WEIGHTS @ _expit(m + tau * _NODES)) - baseline, -30, 30))


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
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def detectable_gain(cases: int, epochs: int, baseline_accuracy: float, tau: float = ASSUMED_TAU) -> Power:
    """The minimum gain in points detected with 80% power at alpha 0.05 (module docstring)."""
    from scipy.optimize import brentq

    if cases < 2 or epochs < 1 or not 0 < baseline_accuracy < 1 or tau < 0:
        raise ValueError("need cases >= 2, epochs >= 1, 0 < baseline accuracy < 1 and tau >= 0")
    mu = _mu(baseline_accuracy, tau)
    top = 0.25
    while _power(mu, tau, top, cases, epochs) < TARGET:
        top *= 2
        if top > 16:  # even near-certain success of the treatment does not reach 80% power
            return Power(cases, epochs, baseline_accuracy, tau, float("nan"))
    start = brentq(lambda d: _power(mu, tau, d, cases, epochs) - TARGET, 0.0, top, xtol=1e-6)
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


def power_from_samples(samples: pd.DataFrame, baseline_method: str = "all_at_once") -> pd.DataFrame:
    """POWER_COLUMNS per benchmark and configuration of the baseline method (module docstring)."""
    rows = []
    scored = samples[samples["correct"].notna() & (samples["method"] == baseline_method)]
    for (benchmark, model, config), frame in scored.groupby(["benchmark", "model", "config"], sort=True):
        per_case = frame.groupby("case")["correct"].agg(["mean", "size"])
        cases, epochs = len(per_case), int(per_case["size"].median())
        baseline = float(per_case["mean"].mean())
        outcome = ", ".join(sorted(set(frame["outcome"].dropna().astype(str)))) if "outcome" in frame else ""
        row = {"benchmark": benchmark, "outcome": outcome, "model": model, "config": config, "cases": cases, "epochs": epochs,
               "baseline_accuracy": baseline, "tau": np.nan, "tau_source": "", "detectable_gain_points": np.nan}
        if cases >= 2 and 0 < baseline < 1:
            if (per_case["size"] >= 2).all() and cases >= 3:
                tau, source = _tau_from_case_means(per_case["mean"].to_numpy(), per_case["size"].to_numpy(), baseline), "estimated"
            else:
                tau, source = ASSUMED_TAU, "assumed (one replicate)"
            row.update(tau=tau, tau_source=source,
                       detectable_gain_points=detectable_gain(cases, epochs, baseline, tau).detectable_gain_points)
        else:
            row["tau_source"] = "no estimate: fewer than 2 cases or baseline accuracy 0 or 100%"
        rows.append(row)
    return pd.DataFrame(rows, columns=POWER_COLUMNS)


def power_markdown(table: pd.DataFrame) -> str:
    from analysis._format import markdown_table, number, pct

    parts = [
        "# Power: the smallest gain Table 1's test detects\n",
        "Per benchmark and configuration of the baseline: the gain in points that the paired "
        "case-level test detects with 80% power at alpha 0.05, for these cases and epochs, from the "
        "baseline accuracy and the between-case SD tau (logit scale) in the logs. A smaller true gain "
        "cannot reliably be told apart from none. Model and approximation: `analysis/power.py`.\n",
    ]
    if table.empty:
        parts.append("No baseline trials.\n")
        return "\n".join(parts)
    shown = pd.DataFrame({
        "benchmark": table["benchmark"], "model": [f"{m} `{c}`" for m, c in zip(table["model"], table["config"])],
        "cases": table["cases"].astype(str), "epochs": table["epochs"].astype(str),
        "outcome": table["outcome"],
        "baseline %": table["baseline_accuracy"].map(pct), "tau": table["tau"].map(number),
        "tau from": table["tau_source"], "detectable gain (points)": table["detectable_gain_points"].map(lambda x: number(x, 1)),
    })
    parts.append(markdown_table(shown, align=["l", "l", "r", "r", "l", "r", "r", "l", "r"], keep=2))
    return "\n".join(parts)


def power_command(log_dir: str | None, baseline_method: str, cases: int | None, epochs: int,
                  baseline_accuracy: float | None, tau: float, benchmark: str | None = None) -> int:
    """``blame power``: the table from LOG_DIR, or one line from stated assumptions (``benchmark``:
    a :data:`PLANNING` entry's cases and baseline, unless given); exit status."""
    if log_dir is None:
        if benchmark is not None:
            if benchmark not in PLANNING:
                print(f"blame power: --benchmark {benchmark!r}: valid: {', '.join(PLANNING)}", file=sys.stderr)
                return 1
            planned, assumed, source = PLANNING[benchmark]
            cases = planned if cases is None else cases
            if baseline_accuracy is None:
                print(f"{benchmark}: {planned} cases, baseline {100 * assumed:.1f}% from {source}")
                baseline_accuracy = assumed
        if cases is None:
            print("blame power: give LOG_DIR, --benchmark NAME or --cases N (with --epochs, --baseline-accuracy, --tau)",
                  file=sys.stderr)
            return 1
        baseline_accuracy = 0.5 if baseline_accuracy is None else baseline_accuracy
        try:
            gain = detectable_gain(cases, epochs, baseline_accuracy, tau).detectable_gain_points
        except ValueError as error:
            print(f"blame power: {error}", file=sys.stderr)
            return 1
        print(f"{cases} cases x {epochs} epochs, baseline {100 * baseline_accuracy:.1f}%, tau {tau:g}: "
              + (f"a gain below {gain:.1f} points cannot be told apart (80% power, alpha 0.05)"
                 if gain == gain else "no gain reaches 80% power"))
        return 0
    from analysis.frames import read_logs
    from analysis.outcomes import choose_outcomes

    try:
        samples, _ = choose_outcomes(read_logs(log_dir, progress=None).samples, {})
    except FileNotFoundError as error:
        print(f"blame power: {error}", file=sys.stderr)
        return 1
    print(power_markdown(power_from_samples(samples, baseline_method)))
    return 0
