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


def test_a_tiny_detectable_gain_is_not_printed_as_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """At a million cases x 100 epochs the detectable gain is a few hundredths of a point: printed
    with two significant digits, never "a gain below 0.0 points"; the default baseline is 50%."""
    from analysis.power import NO_GAIN, gain_points

    assert main(["power", "--cases", "1000000", "--epochs", "100"]) == 0
    out = capsys.readouterr().out
    gain = detectable_gain(1_000_000, 100, 0.5).detectable_gain_points
    assert 0.001 < gain < 0.1 and f"a gain below {gain:.2g} points cannot be told apart" in out
    assert "baseline 50.0%" in out and "below 0.0 points" not in out
    assert (gain_points(12.34), gain_points(0.0432), gain_points(float("nan"))) == ("12.3", "0.043", NO_GAIN)


def test_generated_power_says_no_gain_reaches_80_percent_instead_of_a_planning_figure(tmp_path) -> None:
    """A measured baseline at which no gain reaches 80% power (NaN with ``power_from`` set) is
    said so; only a row with no estimate (``power_from`` empty) falls back to the planning baseline."""
    import pandas as pd

    from blame_bench.sweep import generated_power

    (tmp_path / "tables").mkdir()
    columns = ["benchmark", "model", "cases", "epochs", "baseline_accuracy", "detectable_gain_points", "power_from"]
    pd.DataFrame([["generated/trading", "offline/random", 6, 1, 0.3, float("nan"), "simulation"],
                  ["generated/cortex", "offline/random", 12, 1, 0.0, float("nan"), ""]],
                 columns=columns).to_csv(tmp_path / "tables" / "power.csv", index=False)
    text = generated_power(tmp_path, ("cortex", "trading"))
    assert "| generated/trading | offline/random | 6 | 1 | 30.0 | measured | no gain reaches 80% power |" in text
    assert "| generated/cortex | offline/random | 12 | 1 | 30.0 | planning (blame/cortex, tau 1) | 61.1 |" in text


def test_symbolic_links_to_logs_are_read_like_logs(log_dir, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of links (one per log, one to a folder of logs, a dangling one and one back to the
    folder itself) lists every log once and gives the same power table as the logs themselves."""
    from analysis.frames import list_logs

    links, first, logs = tmp_path / "links", tmp_path / "first", sorted(log_dir.glob("*.eval"))
    (links / "sub").mkdir(parents=True)
    first.mkdir()
    (first / logs[0].name).symlink_to(logs[0])
    for path in logs[1:]:
        (links / path.name).symlink_to(path)
    (links / "sub" / "first").symlink_to(first)
    (links / "sub" / "loop").symlink_to(links)
    (links / "gone.eval").symlink_to(tmp_path / "missing.eval")
    found = list_logs(links)
    assert len(found) == len(logs) + 1 and str(links / "sub" / "first" / logs[0].name) in found
    assert str(links / "gone.eval") in found and not any("/loop/" in path for path in found)
    assert main(["power", str(log_dir)]) == 0
    expected = capsys.readouterr().out
    assert main(["power", str(links)]) == 0
    assert capsys.readouterr().out == expected
