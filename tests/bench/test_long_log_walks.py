"""bench/long_log.py --walks: one walk measured for real (small and fast), the fitted exponents
and the tables on hand-made rows."""

from __future__ import annotations

import pytest

from bench.long_log import (
    OTHER_SOLVERS,
    WALK_SOLVERS,
    WALK_STEPS,
    exponent,
    measure_walk,
    walk_figure,
    walk_tables,
)


def test_one_walk_asks_about_every_step_and_counts_what_it_sent() -> None:
    """offline/first answers "no" to every step, so step-by-step on a 30-step log makes 30 calls;
    each prompt holds the log up to its step, so the characters sent exceed the sum of the
    prefixes' own step texts; 30 short steps fit the budget (nothing omitted) and every prompt
    after the first extends an earlier one (reuse well above half)."""
    row = measure_walk("step_by_step", 30)
    assert (row["solver"], row["steps"], row["calls"], row["omitted"]) == ("step_by_step", 30, 30, 0)
    turns = sum(len(f"Turn {i}: checking source {i % 97}.") for i in range(29))  # steps 1..29 (step 0: the question)
    assert row["chars"] > 30 * turns // 2
    assert 0.5 < row["reuse"] < 1 and row["peak_mb"] >= row["baseline_mb"] > 0
    assert 0 <= row["render_cpu_s"] < row["cpu_s"]


def test_exponent_is_the_log_log_slope() -> None:
    assert exponent([1, 2, 4, 8], [3, 12, 48, 192]) == pytest.approx(2.0)
    assert exponent([500, 1000, 2000], [5.0, 10.0, 20.0]) == pytest.approx(1.0)


def _rows() -> list[dict]:
    rows = []
    for n in WALK_STEPS:
        for solver in (*WALK_SOLVERS, *OTHER_SOLVERS):
            rows.append({"solver": solver, "steps": n, "calls": n, "chars": 10 * n * n, "cpu_s": 1e-5 * n * n, "render_cpu_s": 0.01,
                         "peak_mb": 300.0, "baseline_mb": 200.0, "reuse": 0.9, "omitted": 0})  # fmt: skip
    return rows


def test_tables_show_each_walk_its_fits_and_every_other_method(tmp_path) -> None:
    """Characters 10 n^2 and CPU 1 µs per character: CPU grows as characters to the power 1 and
    as steps to the power 2, 1,000 µs per 1,000 characters, 10 n µs per call; the rendering's
    0.01 s does not grow (power 0); each other method
    has one row with its calls and characters."""
    lines = walk_tables(_rows())
    assert "| step_by_step | 500 | 500 | 2,500,000 | 2.5 | 0.01 | 300 (200) | 90.0% | 0 |" in lines
    [fit] = [line for line in lines if line.startswith("| hybrid | 1.00 | 0.00 | 2.00 | 2.00 | 1000, 1000, 1000, 1000 | ")]
    assert fit.endswith(" | 5.0, 10.0, 15.0, 20.0 |")  # CPU per call: 1e-5 n^2 / n seconds
    assert sum(line.startswith("| all_at_once | 500, 2,500,000 | 1,000, 10,000,000 |") for line in lines) == 1
    assert {line.split(" | ")[0][2:] for line in lines if line.endswith("2,000, 40,000,000 |")} == set(OTHER_SOLVERS)
    walk_figure(_rows(), tmp_path / "w.png")
    assert (tmp_path / "w.png").stat().st_size > 0
