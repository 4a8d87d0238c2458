"""`blame sweep generated-table1`: generates each system's sessions (BLAME's mix by default) into
the log folder, runs POIROT and the single judge on them, reports Table 1 with the design effect
by problem type and the power at the generated size; safe runs (--safe-share) only in their own
false-alarm row; a rerun reuses the folders, a folder of another generation or with edited data
is refused in one line."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.tables import SAFE_ROW
from blame.trajectory_folder import load_trajectory_folder, write_trajectories
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


def _section(report: str, start: str, end: str) -> str:
    return report[report.index(start):report.index(end)]


def test_generated_table1_reports_table1_on_blames_mix_with_the_design_effect(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    logs, out = tmp_path / "logs", tmp_path / "report"
    argv = ["generated-table1", "--model", "offline/random", "--sessions", "12", "--no-figures",
            "--log-dir", str(logs), "--out", str(out)]
    assert sweep(argv) == 0
    printed = capsys.readouterr()
    for system in SYSTEMS:
        stated = stated_generation(logs / "generated" / system)
        assert {k: stated[k] for k in ("generator", "system", "mode", "seed", "sessions", "mix", "decisive_only",
                                       "safe_share", "max_faults")} == {
            "generator": "simulators 5", "system": system, "mode": "template", "seed": 0, "sessions": 12,
            "mix": "blame", "decisive_only": True, "safe_share": 0.0, "max_faults": 1}
        records = load_trajectory_folder(logs / "generated" / system)
        assert all(r.label is not None and r.outcome == "failed" for r in records)  # BLAME's mix: failures only
    report = (out / "report.md").read_text(encoding="utf-8")
    table1 = _section(report, "## Table 1: every method vs the baseline `all_at_once`", "## Table 1b")
    power = report[report.index("## Power: the smallest gain"):]
    for system in SYSTEMS:
        assert f"### generated/{system}" in table1
        assert f"| generated/{system} | offline/random " in power  # the report's power table, 12 cases
    assert table1.count("Clustering by problem type (fault set; the safe runs are in their own row") == 2
    assert re.search(r"poirot: design effect \d+\.\d\d over \d+ problem types, \d+ effective of 12 sessions, "
                     r"detectable gain beyond the catalogue (\d+\.\d points|no estimate \(--)", table1)
    assert SAFE_ROW not in table1  # no safe runs by default
    gains = (out / "generated_power.md").read_text(encoding="utf-8")
    assert gains in printed.out

    assert sweep(argv) == 0  # a rerun reuses the generated folders and the logs
    assert "==> reusing" in capsys.readouterr().err
    assert sweep([*argv[:4], "13", *argv[5:]]) == 1  # another generation in that folder: one line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds sessions 12, not sessions 13; give the options it was made with" in err
    assert sweep([*argv, "--mix", "none"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/generated/cortex holds decisive_only True, faults ['EXO-X', 'GUA-X', 'DD-X', " \
        "'PT-X', 'CR-X'], mix blame, not decisive_only False, faults ['EXO-X', 'GUA-X', 'DD-X', 'PT-X', 'CR-X', " \
        "'COMM-X'], mix None; give the options it was made with" in err


def test_a_generated_folder_whose_data_was_edited_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The card's hash is recomputed from the data: a folder edited after generation is not reused."""
    from blame_bench.sweep import generated_data

    logs = tmp_path / "logs"
    assert generated_data(("trading",), 4, 0, logs) is None
    folder = logs / "generated" / "trading"
    records = load_trajectory_folder(folder)
    card = (folder / "README.md").read_text(encoding="utf-8")
    steps = [records[0].steps[0].model_copy(update={"content": "edited"}), *records[0].steps[1:]]
    edited = [records[0].model_copy(update={"steps": steps}), *records[1:]]
    for path in folder.iterdir():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    folder.rmdir()
    write_trajectories(edited, folder, "x", card.split("---\n", 2)[-1])
    assert generated_data(("trading",), 4, 0, logs) == (
        f"--log-dir {logs}: {folder}: its data does not have the sha256 its card states (edited after generation); "
        "remove it or give another --log-dir")


def test_safe_runs_are_only_in_the_false_alarm_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    logs, out = tmp_path / "logs", tmp_path / "report"
    assert sweep(["generated-table1", "--model", "offline/random", "--sessions", "12", "--no-figures", "--safe-share",
                  "0.25", "--log-dir", str(logs), "--out", str(out)]) == 0
    for system in SYSTEMS:
        records = load_trajectory_folder(logs / "generated" / system)
        safe = sum(r.label is None for r in records)
        assert safe > 0 and stated_generation(logs / "generated" / system)["safe_share"] == 0.25
        rows = pd.read_csv(out / "tables" / "table1.csv")
        mine = rows[(rows["benchmark"] == f"generated/{system}") & (rows["treatment"].str.startswith("poirot"))]
        by = {r["group"]: r for r in mine.to_dict("records")}
        assert by["overall"]["n_cases"] == len(records) - safe and by["safe"]["n_cases"] == safe
    table1 = (out / "report.md").read_text(encoding="utf-8")
    assert table1.count(f"| {SAFE_ROW} |") >= 2


def test_a_planted_no_fault_method_does_not_beat_the_judge_overall() -> None:
    """Hand-made trials: 6 faulty sessions (2 problem types) and 4 safe runs. "no_fault" answers
    the zero vector (right on every safe run, wrong on every faulty one); the judge is right on 2
    faulty sessions and 1 safe run. Overall (faulty only): 0% vs 33.3%; the safe row: 100% vs 25%."""
    from analysis.tables import table1

    faulty = [("a", 1), ("a", 0), ("a", 0), ("b", 1), ("b", 0), ("b", 0)]
    rows = []
    for method, protocol in (("no_fault", "no_fault"), ("all_at_once", "all_at_once")):
        for i, (kind, judge) in enumerate(faulty):
            rows.append({"case": f"f{i}", "fault_group": "k=1", "scenario": kind,
                         "correct": 0.0 if method == "no_fault" else float(judge)})
            rows[-1].update(method=method, protocol=protocol)
        for i in range(4):
            rows.append({"case": f"s{i}", "fault_group": "safe", "scenario": "", "method": method, "protocol": protocol,
                         "correct": 1.0 if method == "no_fault" or i == 0 else 0.0})
    frame = pd.DataFrame(rows).assign(benchmark="generated/trading", model="m", config="c", epoch=1,
                                      label_informed=False, metric="vector.exact")
    table, _ = table1(frame, ["no_fault"])
    by = {r["group"]: r for r in table.to_dict("records")}
    assert (by["overall"]["acc_treatment"], round(by["overall"]["acc_baseline"], 4)) == (0.0, 0.3333)
    assert by["overall"]["gain_points"] < 0 and by["overall"]["n_cases"] == 6
    assert (by["safe"]["acc_treatment"], by["safe"]["acc_baseline"], by["safe"]["n_cases"]) == (1.0, 0.25, 4)
    # the gain per session is -1 on the two sessions the judge got right (one per type): ICC 0, design effect 1
    assert (by["overall"]["design_effect"], by["overall"]["n_effective"], by["overall"]["n_types"]) == (1.0, 6.0, 2)


def test_the_gain_beyond_the_catalogue_is_the_detectable_gain_at_the_effective_sessions() -> None:
    """40.2 effective sessions of 120 trials on 60 cases (2 epochs), baseline 30%: the detectable
    gain of 40 cases x 2 epochs; a 0% baseline or under 2 effective sessions: no estimate, why."""
    from analysis.design_effect import beyond_catalogue
    from analysis.power import detectable_gain

    row = {"n_effective": 40.2, "n_baseline": 120, "n_cases": 60, "acc_baseline": 0.3}
    assert beyond_catalogue(row) == f"{detectable_gain(40, 2, 0.3).detectable_gain_points:.1f} points"
    assert beyond_catalogue({**row, "acc_baseline": 0.0}).startswith("no estimate (--baseline-accuracy 0.0: ")
    assert beyond_catalogue({**row, "n_effective": 1.4}).startswith("no estimate (--cases 1: ")


def test_the_design_effect_is_kishs_from_the_anova_intraclass_correlation() -> None:
    """Hand-computed: two types of two, all alike within (ICC 1): D = 1 + (8/4 - 1) = 2, 2 effective;
    no difference between types (ICC < 0, floored): D = 1; types of 3 and 2, alike within: m0 = 2.4,
    ICC 1, D = 1 + (13/5 - 1) = 2.6, 5 / 2.6 effective; one type: no estimate."""
    from analysis.design_effect import design_effect

    assert design_effect([1, 1, 0, 0], ["a", "a", "b", "b"]) == (2.0, 2.0, 2)
    assert design_effect([1, 0, 1, 0], ["a", "a", "b", "b"]) == (1.0, 4.0, 2)
    effect, effective, k = design_effect([1, 1, 1, 0, 0], ["a", "a", "a", "b", "b"])
    assert (round(effect, 6), round(effective, 6), k) == (2.6, round(5 / 2.6, 6), 2)
    assert design_effect([1, 0], ["a", "a"])[2] == 1 and design_effect([1, 0], ["a", "a"])[0] != design_effect([1, 0], ["a", "a"])[0]


def test_sessions_and_seed_are_bounded_and_only_for_generated_data(capsys: pytest.CaptureFixture[str]):
    assert sweep(["raffles", "--model", "offline/random", "--sessions", "5"]) == 2
    assert "--sessions is for a recipe that generates its data (generated-table1), not raffles" in capsys.readouterr().err
    assert sweep(["auditing", "--model", "offline/random", "--seed", "1"]) == 2
    assert "--seed is for a recipe that generates its data" in capsys.readouterr().err
    assert sweep(["generated-table1", "--model", "offline/random", "--sessions", "0"]) == 2
    assert "--sessions must be an integer in 1..20000, got 0" in capsys.readouterr().err
    assert sweep(["generated-table1", "--model", "offline/random", "--seed", "-1"]) == 2
    assert "--seed must be an integer in 0..2147483647, got -1" in capsys.readouterr().err
    assert sweep(["raffles", "--model", "offline/random", "--safe-share", "0.2"]) == 2
    assert "--safe-share is for a recipe that generates its data" in capsys.readouterr().err
    assert sweep(["generated-table1", "--model", "offline/random", "--safe-share", "1.5"]) == 2
    assert "--safe-share must be a share in 0..1, got 1.5" in capsys.readouterr().err


def test_the_power_at_the_generated_size_uses_the_measured_baseline_when_it_gives_one(tmp_path: Path):
    """A measured estimate is kept; where the measured baseline was searched and no gain reaches 80%
    power (a ``power_from``, no gain), the row says so; a baseline the logs give no estimate from
    (no ``power_from``: 0% as offline/random scores) falls back to BLAME's planning baseline; fewer
    than 2 cases say why there is no estimate."""
    import pandas as pd

    from blame_bench.sweep import generated_power

    (tmp_path / "tables").mkdir()
    nan = float("nan")
    pd.DataFrame([
        {"benchmark": "generated/cortex", "model": "m", "cases": 200, "epochs": 1, "baseline_accuracy": 0.045,
         "detectable_gain_points": 8.04, "power_from": "t approximation"},
        {"benchmark": "generated/cortex", "model": "s", "cases": 3, "epochs": 1, "baseline_accuracy": 0.5,
         "detectable_gain_points": nan, "power_from": "simulation"},
        {"benchmark": "generated/trading", "model": "m", "cases": 200, "epochs": 1, "baseline_accuracy": 0.0,
         "detectable_gain_points": nan, "power_from": ""},
        {"benchmark": "generated/trading", "model": "n", "cases": 1, "epochs": 1, "baseline_accuracy": 0.0,
         "detectable_gain_points": nan, "power_from": ""},
    ]).to_csv(tmp_path / "tables" / "power.csv", index=False)
    text = generated_power(tmp_path, SYSTEMS)
    assert "| generated/cortex | m | 200 | 1 | 4.5 | measured | 8.0 |" in text
    assert "| generated/cortex | s | 3 | 1 | 50.0 | measured | no gain reaches 80% power |" in text
    assert "| generated/trading | m | 200 | 1 | 30.0 | planning (blame/trading, tau 1) | 12.8 |" in text
    assert "| generated/trading | n | 1 | 1 | 30.0 | planning (blame/trading, tau 1) | no estimate (--cases 1: " in text
    assert (tmp_path / "generated_power.md").read_text(encoding="utf-8") == text
