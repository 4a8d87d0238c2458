"""Power of M1's protocol x quartile test by simulation (analysis.m1_power.m1_power, `blame power --m1`):
seeded, bounded, fitted as the report fits M1, and its odds ratio population-averaged."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.complexity import quartile_of_rank
from analysis.m1_power import M1_ESTIMAND, M1_MAX_WORK, _quartiles, m1_from_samples, m1_markdown, m1_power, m1_problem
from analysis.power import power_from_samples, power_markdown
from blame_bench.cli import main


def test_cases_split_over_quartiles_like_the_report() -> None:
    """126 cases: 32, 31, 32, 31, by the rank rule of analysis.complexity."""
    quartiles = _quartiles(126)
    assert np.bincount(quartiles)[1:].tolist() == [32, 31, 32, 31]
    assert quartiles.tolist() == [quartile_of_rank(i, 126) for i in range(126)]


def test_same_seed_same_numbers_other_seed_other_data() -> None:
    first = m1_power(cases=40, simulations=40, seed=7).as_dict()
    again = m1_power(cases=40, simulations=40, seed=7).as_dict()
    first.pop("seconds"), again.pop("seconds")
    assert first == again
    other = m1_power(cases=40, simulations=40, seed=8).as_dict()
    assert other["estimated_odds_ratio"] != first["estimated_odds_ratio"]


def test_no_interaction_rejects_rarely_a_large_one_mostly() -> None:
    """OR 1: p < 0.05 in about 5% of the data sets (at most 8 of 40, wide Monte-Carlo slack); OR 3 at
    40 cases x 3 runs: in at least 80%."""
    null = m1_power(cases=40, runs=1, odds_ratio=1.0, simulations=40)
    assert null.power <= 0.2 and null.power_low <= 0.05 <= null.power_high
    strong = m1_power(cases=40, runs=3, odds_ratio=3.0, simulations=40)
    assert strong.power >= 0.8 and strong.no_p == 0


def test_monte_carlo_interval_is_clopper_pearson() -> None:
    """0 rejections of 40 (no interaction, tau 3, 12 cases x 2 runs, seed SEED): the exact upper bound
    1 - 0.025^(1/40) = 0.0881."""
    result = m1_power(cases=12, runs=2, tau=3.0, odds_ratio=1.0, simulations=40)
    assert result.power == 0.0 and result.power_low == 0.0
    assert result.power_high == pytest.approx(1 - 0.025 ** (1 / 40), abs=1e-9)


def test_few_cases_fall_back_to_firth_and_count_it() -> None:
    """10 cases x 1 run separate in some data sets; they are fitted by Firth, as the report would."""
    assert m1_power(cases=10, simulations=40).firth >= 1


def test_m1_odds_ratio_is_population_averaged() -> None:
    """The limit M1 converges to is the logit fit of the expected cell accuracies: computed here by
    adaptive quadrature and statsmodels' GLM, independently of analysis.m1_power. With tau 0 it is
    the case-level OR itself; with tau 1 it is 1.48 for 1.6, and the simulated estimates agree."""
    import statsmodels.api as sm
    from scipy import integrate, optimize

    def expit(x: float) -> float:
        return 1 / (1 + math.exp(-x))

    def accuracy(a: float, shift: float) -> float:
        return integrate.quad(lambda u: expit(a + u + shift) * math.exp(-u * u / 2) / math.sqrt(2 * math.pi),
                              -12, 12)[0]

    a = optimize.brentq(lambda x: accuracy(x, 0.0) - 0.54, -5, 5)
    q = np.array([1.0, 2, 3, 4, 1, 2, 3, 4])
    t = np.array([0.0, 0, 0, 0, 1, 1, 1, 1])
    y = [accuracy(a, ti * math.log(1.6) * (qi - 2.5)) for ti, qi in zip(t, q)]
    X = np.column_stack([np.ones(8), t, q, t * q])
    weights = np.tile([32.0, 31, 32, 31], 2)
    fit = sm.GLM(np.array(y), X, family=sm.families.Binomial(), var_weights=weights).fit()
    limit = math.exp(fit.params[3])
    assert limit == pytest.approx(1.4767, abs=1e-3)
    result = m1_power(cases=126, runs=3, simulations=40)
    assert result.marginal_odds_ratio == pytest.approx(limit, abs=1e-6)
    assert abs(result.estimated_odds_ratio - limit) < 0.1
    assert m1_power(cases=40, tau=0.0, simulations=20).marginal_odds_ratio == pytest.approx(1.6, abs=1e-9)


def test_out_of_range_is_one_line_naming_the_option() -> None:
    assert m1_problem(9, 1, 0.5, 1.0, 1.6, 100, 0) == "--cases 9: must be an integer from 10 to 1,000 with --m1"
    assert m1_problem(100, 21, 0.5, 1.0, 1.6, 100, 0).startswith("--epochs 21:")
    assert m1_problem(100, 1, 0.995, 1.0, 1.6, 100, 0).startswith("--baseline-accuracy 0.995:")
    assert m1_problem(100, 1, 0.5, 1.0, 0.0, 100, 0).startswith("--odds-ratio 0.0:")
    assert m1_problem(100, 1, 0.5, 1.0, 1.6, 19, 0).startswith("--simulations 19:")
    assert m1_problem(100, 1, 0.5, 1.0, 1.6, 100, -1).startswith("--seed -1:")
    assert m1_problem(1000, 20, 0.5, 1.0, 1.6, 26, 0) == (
        f"--simulations 26 x --cases 1000 x --epochs 20 = 520,000 simulated case-runs: at most {M1_MAX_WORK:,} "
        "(give fewer simulations)")
    with pytest.raises(ValueError, match="--cases 9"):
        m1_power(cases=9)


def test_cli_m1_from_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", "--m1", "--cases", "40", "--simulations", "20", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    expected = m1_power(cases=40, baseline_accuracy=0.54, simulations=20, seed=3)  # the documented M1 baseline
    rejected = round(expected.power * 20)
    assert (f"40 cases x 1 run(s) per protocol, baseline 54.0%, tau 1, case-level OR 1.6 per quartile step: "
            f"power {100 * expected.power:.1f}%") in captured.out
    assert f"p < 0.05 in {rejected} of 20 simulated data sets, seed 3" in captured.out
    assert f"population-averaged OR, {expected.marginal_odds_ratio:.2f}" in captured.out
    assert "the M1 simulations took" in captured.err
    assert main(["power", "--m1", "--cases", "5"]) == 1
    assert capsys.readouterr().err == "blame power: --cases 5: must be an integer from 10 to 1,000 with --m1\n"
    assert main(["power", "--cases", "40", "--odds-ratio", "2"]) == 1
    assert "--odds-ratio: only with --m1" in capsys.readouterr().err


def _frame(cases: int, epochs: int, config: str) -> list[dict[str, object]]:
    return [{"benchmark": "b", "model": "m", "config": config, "setting": f"T={config}", "method": "all_at_once",
             "case": f"{config}{i}", "epoch": e, "quartile": float(quartile_of_rank(i, cases)),
             "correct": float((i + e) % 2 == 0)} for i in range(cases) for e in range(1, epochs + 1)]


def test_m1_from_samples_at_the_logs_size() -> None:
    """12 cases x 2 epochs, each case half right: baseline 50%, no between-case variance (tau 0,
    estimated); 6 cases are too few for M1's p, and the row says so."""
    samples = pd.DataFrame(_frame(12, 2, "c1") + _frame(6, 1, "c2"))
    table = m1_from_samples(samples, simulations=20)
    first, second = table.iloc[0], table.iloc[1]
    assert (first["cases"], first["runs"], first["baseline_accuracy"], first["tau"], first["tau_source"]) == (
        12, 2, 0.5, 0.0, "estimated")
    assert first["simulations"] == 20 and 0 <= first["power"] <= 1
    assert math.isnan(second["power"]) and second["note"].startswith("no estimate: needs 10-1,000 cases")
    text = m1_markdown(table)
    assert "m · T=c1 `c1`" in text and "## Power of M1's interaction" in text
    assert M1_ESTIMAND in power_markdown(power_from_samples(samples.iloc[:0]))


def test_cli_m1_from_logs(log_dir, capsys: pytest.CaptureFixture[str]) -> None:
    """With LOG_DIR, --m1 adds M1's power at each baseline configuration's size below the power table."""
    assert main(["power", str(log_dir), "--m1", "--simulations", "20"]) == 0
    out = capsys.readouterr().out
    assert M1_ESTIMAND in out and "## Power of M1's interaction" in out
    assert main(["power", str(log_dir), "--m1", "--seed", "-2"]) == 1
    assert capsys.readouterr().err == "blame power: --seed -2: must be a non-negative integer below 2**63\n"
