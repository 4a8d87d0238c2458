"""`blame sweep generated-table1`: generates each system's sessions into the log folder, runs
POIROT and the single judge on them, reports Table 1 and the power at the generated size; a
rerun reuses the folders, a folder of another generation is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from blame_bench.cli import main
from blame_bench.sweep import recipe, stated_generation

SYSTEMS = ("cortex", "trading")


def sweep(argv: list[str]) -> int:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        return main(["sweep", *argv])


def test_the_recipe_runs_poirot_and_the_judge_on_both_generated_systems():
    chosen = recipe("generated-table1")
    assert chosen.generates == SYSTEMS and chosen.epochs == 1
    assert {(r.task, r.solver, r.task_args["data_dir"], r.task_args["score"]) for r in chosen.runs} == {
        ("trajectories", solver, f"LOG_DIR/generated/{system}", "vector")
        for system in SYSTEMS for solver in ("poirot", "all_at_once")}
    placed = chosen.runs[0].placed(Path("/x/logs"))
    assert placed.task_args["data_dir"] == "/x/logs/generated/cortex"


def test_generated_table1_reports_table1_and_the_power_at_the_generated_size(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    logs, out = tmp_path / "logs", tmp_path / "report"
    argv = ["generated-table1", "--model", "offline/random", "--sessions", "12", "--no-figures",
            "--log-dir", str(logs), "--out", str(out)]
    assert sweep(argv) == 0
    printed = capsys.readouterr()
    for system in SYSTEMS:
        assert stated_generation(logs / "generated" / system) == {
            "generator": "simulators 1", "system": system, "mode": "template", "seed": "0", "sessions": "12"}
    report = (out / "report.md").read_text(encoding="utf-8")
    table1 = report[report.index("## Table 1: every method vs the baseline `all_at_once`"):report.index("## Table 1b")]
    power = report[report.index("## Power: the smallest gain"):]
    for system in SYSTEMS:
        assert f"### generated/{system}" in table1
        assert f"| generated/{system} | offline/random " in power  # the report's power table, 12 cases
    gains = (out / "generated_power.md").read_text(encoding="utf-8")
    assert gains in printed.out
    for system in SYSTEMS:  # offline/random scores 0%: the planning baseline gives the gain at 12 cases
        assert f"| generated/{system} | offline/random | 12 | 1 | 30.0 | planning (blame/{system}, tau 1) | 61.1 |" in gains

    assert sweep(argv) == 0  # a rerun reuses the generated folders and the logs
    assert "==> reusing" in capsys.readouterr().err
    assert sweep([*argv[:4], "13", *argv[5:]]) == 1  # another generation in that folder: one line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds generator simulators 1, system cortex, mode template, seed 0, sessions 12" in err
    assert "not 13 sessions of seed 0" in err


def test_sessions_and_seed_are_bounded_and_only_for_generated_data(capsys: pytest.CaptureFixture[str]):
    assert sweep(["raffles", "--model", "offline/random", "--sessions", "5"]) == 2
    assert "--sessions is for a recipe that generates its data (generated-table1), not raffles" in capsys.readouterr().err
    assert sweep(["auditing", "--model", "offline/random", "--seed", "1"]) == 2
    assert "--seed is for a recipe that generates its data" in capsys.readouterr().err
    assert sweep(["generated-table1", "--model", "offline/random", "--sessions", "0"]) == 2
    assert "--sessions must be an integer in 1..20000, got 0" in capsys.readouterr().err
    assert sweep(["generated-table1", "--model", "offline/random", "--seed", "-1"]) == 2
    assert "--seed must be an integer in 0..2147483647, got -1" in capsys.readouterr().err


def test_the_power_at_the_generated_size_uses_the_measured_baseline_when_it_gives_one(tmp_path: Path):
    """A measured estimate is kept; a 0% baseline falls back to BLAME's planning baseline; fewer
    than 2 cases say why there is no estimate."""
    import pandas as pd

    from blame_bench.sweep import generated_power

    (tmp_path / "tables").mkdir()
    nan = float("nan")
    pd.DataFrame([
        {"benchmark": "generated/cortex", "model": "m", "cases": 200, "epochs": 1, "baseline_accuracy": 0.045,
         "detectable_gain_points": 8.04},
        {"benchmark": "generated/trading", "model": "m", "cases": 200, "epochs": 1, "baseline_accuracy": 0.0,
         "detectable_gain_points": nan},
        {"benchmark": "generated/trading", "model": "n", "cases": 1, "epochs": 1, "baseline_accuracy": 0.0,
         "detectable_gain_points": nan},
    ]).to_csv(tmp_path / "tables" / "power.csv", index=False)
    text = generated_power(tmp_path, SYSTEMS)
    assert "| generated/cortex | m | 200 | 1 | 4.5 | measured | 8.0 |" in text
    assert "| generated/trading | m | 200 | 1 | 30.0 | planning (blame/trading, tau 1) | 12.8 |" in text
    assert "| generated/trading | n | 1 | 1 | 30.0 | planning (blame/trading, tau 1) | no estimate (--cases 1: " in text
    assert (tmp_path / "generated_power.md").read_text(encoding="utf-8") == text
