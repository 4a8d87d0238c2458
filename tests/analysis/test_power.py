"""Power of Table 1's test (analysis.power, `blame power`): the minimum detectable gain is where the
exact sign-flip test, simulated independently here, reaches 80% power."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.power import _moments, _mu, detectable_gain, power_from_samples
from analysis.significance import sign_flip_exact
from blame_bench.cli import main


def _power_at_gain(cases: int, epochs: int, baseline: float, gain_points: float, seed: int) -> float:
    """Rejection rate of sign_flip_exact over 400 fresh data sets whose population gain is gain_points."""
    from scipy.optimize import brentq

    mu = _mu(baseline, 1.0)
    delta = brentq(lambda d: 100 * _moments(mu, 1.0, d, epochs)[0] - gain_points, 0.0, 12.0)
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(400):
        u = rng.normal(0.0, 1.0, cases)
        t = rng.binomial(epochs, 1 / (1 + np.exp(-(mu + u + delta))))
        b = rng.binomial(epochs, 1 / (1 + np.exp(-(mu + u))))
        rejected += sign_flip_exact(t - b) < 0.05
    return rejected / 400


def test_detectable_gain_has_80_percent_power_on_fresh_simulations() -> None:
    """CORTEX-sized: 15 cases x 3 epochs, baseline 30%, tau 1. At the reported gain the exact test
    rejects 80% +- 6 of fresh data sets (other seeds than the search's); at half of it, far less."""
    gain = detectable_gain(15, 3, 0.3, 1.0).detectable_gain_points
    assert 20 < gain < 40
    assert abs(_power_at_gain(15, 3, 0.3, gain, seed=5) - 0.80) <= 0.06
    assert _power_at_gain(15, 3, 0.3, gain / 2, seed=6) < 0.5


def test_more_cases_and_epochs_detect_smaller_gains_and_six_cases_may_detect_none() -> None:
    g15 = detectable_gain(15, 1, 0.3).detectable_gain_points
    assert detectable_gain(15, 3, 0.3).detectable_gain_points < g15
    assert detectable_gain(58, 1, 0.3).detectable_gain_points < g15
    # 6 cases: the smallest two-sided p is 2/2^6, reached only when every case improves
    assert math.isnan(detectable_gain(6, 1, 0.3).detectable_gain_points)


def test_power_from_samples_estimates_tau_from_replicates() -> None:
    """Identical epochs leave no within-case noise: all between-case variance, tau > 0; one epoch
    cannot separate the two, so tau is assumed and said so."""
    import pandas as pd

    rows = [{"benchmark": "b", "model": "m", "config": "c", "method": "all_at_once", "case": f"c{i}", "epoch": e,
             "correct": float(i % 3 == 0)} for i in range(12) for e in (1, 2)]
    table = power_from_samples(pd.DataFrame(rows))
    assert table["tau_source"].item() == "estimated" and table["tau"].item() > 1
    assert table["cases"].item() == 12 and table["epochs"].item() == 2
    one = power_from_samples(pd.DataFrame([r for r in rows if r["epoch"] == 1]))
    assert one["tau_source"].item() == "assumed (one replicate)" and one["tau"].item() == 1.0


def test_cli_power_from_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", "--cases", "15", "--epochs", "3", "--baseline-accuracy", "0.3"]) == 0
    gain = detectable_gain(15, 3, 0.3).detectable_gain_points
    assert f"a gain below {gain:.1f} points cannot be told apart" in capsys.readouterr().out
    assert main(["power"]) == 1
    assert "give LOG_DIR, --benchmark NAME or --cases" in capsys.readouterr().err


def test_cli_power_for_a_named_benchmark_states_its_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    """``--benchmark`` takes the cases and the assumed baseline of analysis.power.PLANNING and says
    where the baseline comes from; the docs/statistics.md rows for the AgentRx subsets are its output."""
    from pathlib import Path

    from analysis.power import PLANNING

    assert PLANNING["agentrx/tau_retail"][:2] == (29, 0.724) and PLANNING["agentrx/magentic_one"][:2] == (44, 0.55)
    docs = (Path(__file__).parents[2] / "docs/statistics.md").read_text(encoding="utf-8")
    for name in ("agentrx/tau_retail", "agentrx/magentic_one"):
        assert main(["power", "--benchmark", name]) == 0
        cases, baseline, source = PLANNING[name]
        gain = detectable_gain(cases, 1, baseline).detectable_gain_points
        out = capsys.readouterr().out
        assert f"{name}: {cases} cases, baseline {100 * baseline:.1f}% from {source}" in out
        assert f"a gain below {gain:.1f} points" in out
        row = next(line for line in docs.splitlines() if f"(`{name}`) | {cases} |" in line)
        assert f"| {gain:.1f} |" in row
    assert main(["power", "--benchmark", "agentrx/nope"]) == 1
    assert "valid: blame/cortex" in capsys.readouterr().err
