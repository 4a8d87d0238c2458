"""``blame power``: the power table from LOG_DIR, or one line from stated assumptions, and with
``--m1`` the power of M1's interaction (``analysis.power``, ``analysis.m1_power``). Without LOG_DIR the
baseline accuracy is ``--baseline-accuracy``, else the ``--benchmark``'s planning figure, else 50% (54%,
Who&When AG's all-at-once accuracy, with ``--m1``).

What it cannot answer (an option out of range, assumptions beside LOG_DIR, an M1 option without
``--m1``, a log folder with no usable log or without the baseline's scored trials) is one line on
stderr and exit status 1.
"""

from __future__ import annotations

import sys

from analysis._format import short
from analysis.m1_power import M1_BENCHMARK, M1_ODDS_RATIO, m1_from_samples, m1_line, m1_markdown, m1_power
from analysis.power import (
    ASSUMED_TAU, PLANNING, SIMULATED_CASES, SIMULATED_TRIALS, NO_GAIN, assumption_problem, detectable_gain, gain_points,
    power_from_samples, power_markdown,
)

__all__ = ["PowerError", "power_command"]


class PowerError(ValueError):
    """What ``blame power`` refuses: a line naming the argument and its valid values."""


def power_command(log_dir: str | None, baseline_method: str | None, cases: int | None, epochs: int | None,
                  baseline_accuracy: float | None, tau: float | None, benchmark: str | None = None, m1: bool = False,
                  odds_ratio: float | None = None, simulations: int | None = None, seed: int | None = None) -> int:
    """``blame power``: the table from LOG_DIR, or one line from stated assumptions (``benchmark``:
    a :data:`PLANNING` entry's cases and baseline, unless given); with ``m1`` the power of M1's
    interaction (``m1_power.m1_power``: from assumptions, default ``M1_BENCHMARK``'s; from LOG_DIR,
    ``m1_from_samples``) and its wall time on stderr. Exit status. ``None`` is an option not
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
             benchmark: str | None, default: float = 0.5) -> tuple[int | None, float, list[str]]:
    """Cases and baseline accuracy from the options and ``benchmark``'s :data:`PLANNING` entry
    (baseline ``default`` when neither gives one), and the line saying where a planned baseline comes from."""
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
    return cases, default if baseline_accuracy is None else baseline_accuracy, lines


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
                 + (f"a gain below {gain_points(gain)} points cannot be told apart (80% power, alpha 0.05)"
                    if gain == gain else NO_GAIN)
                 + ("" if power.simulated else f" (t approximation: over {SIMULATED_CASES} cases or "
                                               f"{SIMULATED_TRIALS} cases x epochs)"))
    return lines


def _m1_from_assumptions(baseline_method: str | None, cases: int | None, runs: int | None,
                         baseline_accuracy: float | None, tau: float | None, benchmark: str | None,
                         odds_ratio: float | None, simulations: int | None, seed: int | None) -> list[str]:
    if benchmark is None and cases is None:
        benchmark = M1_BENCHMARK
    m1_baseline = PLANNING[M1_BENCHMARK][1]  # the documented M1 default, also at --cases N
    cases, baseline_accuracy, lines = _planned(baseline_method, cases, baseline_accuracy, benchmark, m1_baseline)
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
    return power_markdown(table) + "\n" + m1_markdown(m1_table)
