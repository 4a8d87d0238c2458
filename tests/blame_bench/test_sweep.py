"""`blame sweep` and `blame check`: each recipe the card shows runs as shown on the offline model
(one sample per task) into its own folder and its report holds the table it promises; a failed
log fails the sweep with no report; `blame check` reads every log's status, not an exit code."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from analysis.published_cells import load_published
from analysis.settings import settings_text
from blame_bench.cli import main
from blame_bench.sweep import RECIPE_NAMES, recipe
from fake_openai_server import MALFORMED_MODEL, serve
from solvers import SOLVERS

REPO = Path(__file__).resolve().parents[2]
CARD = REPO / "BENCHMARK.md"


def card_sweeps() -> dict[str, list[str]]:
    """Recipe -> the arguments of the card's `blame sweep RECIPE ...` command (one per recipe)."""
    commands = re.findall(r"^blame sweep ([a-z][\w-]*)(.*)$", CARD.read_text(encoding="utf-8"), flags=re.M)
    names = [name for name, _ in commands]
    assert sorted(names) == sorted(RECIPE_NAMES), names  # every recipe shown, each once
    return {name: [name, *shlex.split(rest, comments=True)] for name, rest in commands}


def offline(argv: list[str], root: Path) -> list[str]:
    """A shown command on the offline model, one sample per task, folders under ``root``."""
    argv = list(argv)
    argv[argv.index("--model") + 1] = "offline/random"
    epochs = ["--epochs", "2"] if recipe(argv[0]).epochs > 1 else []  # replicates show in the trials
    limit = "2" if argv[0] == "auditing" else "1"  # a failure and a safe run of each task (stratified)
    sessions = ["--sessions", "12"] if recipe(argv[0]).generates else []  # a user runs the default 200
    return [*argv, *epochs, *sessions, "--limit", limit, "--no-figures", "--log-dir", str(root / "logs"),
            "--out", str(root / "report")]


def sweep(argv: list[str]) -> int:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        return main(["sweep", *argv])


def section(report: str, heading: str) -> str:
    """The text of ``report`` from ``heading`` to the next heading of the same level."""
    level = heading.split(" ", 1)[0]
    start = report.index(heading + "\n") + len(heading)
    end = re.search(rf"^{level} ", report[start:], flags=re.M)
    return report[start:start + end.start()] if end else report[start:]


def column(text: str, header: str) -> list[str]:
    """The cells under ``header`` in the Markdown table of ``text`` that has it (one per row; a wide
    table is printed as several, each with the first columns)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|") and f"| {header} |" in line)
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start:])]
    at = rows[0].index(header)
    return [row[at] for row in rows[2:]]


def test_list_describes_every_recipe(capsys: pytest.CaptureFixture[str]):
    assert main(["sweep", "--list"]) == 0
    listed = capsys.readouterr().out
    for name in RECIPE_NAMES:
        assert f"{name}: " in listed
        for run in recipe(name).runs:
            assert run.describe() in listed
    assert "blame_cortex poirot -S preset=paper" in listed
    card_sweeps()


def test_recipes_hold_the_runs_their_tables_need():
    """By hand: the configurations each published table is made of."""
    table1 = recipe("poirot-table1")
    assert table1.epochs == 10
    assert {(r.task, r.solver, dict(r.solver_args).get("preset")) for r in table1.runs} == {
        ("blame_cortex", "poirot", "paper"), ("blame_cortex", "all_at_once", None),
        ("blame_trading", "poirot", "paper"), ("blame_trading", "all_at_once", None)}
    ww = recipe("who-and-when")
    assert len(ww.runs) == len(SOLVERS) * 2 * 2
    assert {(r.task_args["subset"], r.task_args["with_reference_answer"]) for r in ww.runs} == {
        ("algorithm_generated", False), ("algorithm_generated", True), ("hand_crafted", False), ("hand_crafted", True)}
    assert {r.solver for r in recipe("raffles").runs} == {"raffles", "all_at_once", "step_by_step", "binary_search",
                                                          "tool_caller"}
    auditing = recipe("auditing")
    assert {r.solver for r in auditing.runs} == set(SOLVERS)
    assert all(r.task_args.get("safe_controls") or "tau_retail_safe" in r.task_args["subset"] for r in auditing.runs)


PROMISES = {
    "poirot-table1": lambda report: all(
        "| poirot (*label-informed*) |" in section(section(report, "## Table 1b: label-informed methods vs the baseline"
                                                           " (*label-informed*)"), f"### {benchmark}")
        and "| 1 | 2/2 |" in section(section(report, "## Table 1b: label-informed methods vs the baseline"
                                               " (*label-informed*)"), f"### {benchmark}")
        for benchmark in ("blame/cortex", "blame/trading")),
    "poirot-complexity": lambda report: "- who_and_when/algorithm_generated: 1 case(s) with a complexity; quartiles need "
    "at least 4" in section(report, "## Accuracy by complexity quartile")  # one sample: the report says why not
    and "No regression: no trials with a complexity quartile." in section(report, "## Logistic regressions of correctness"),
    "who-and-when": lambda report: all(
        f"| {method} |" in section(section(report, "## Who&When accuracy per model and method"), f"### {subset}")
        for method in SOLVERS for subset in ("who_and_when/algorithm_generated", "who_and_when/hand_crafted")),
    "raffles": lambda report: all(
        "| offline/random `" in section(section(report, heading), f"#### {subset}")
        and " | raffles | " in section(section(report, heading), f"#### {subset}")
        for subset in ("who_and_when/algorithm_generated", "who_and_when/hand_crafted") for heading in ("### Who&When step accuracy within k steps (RAFFLES)", "### Who&When accuracy by log length (RAFFLES)"))
    and "| 1 |" in section(report, "### RAFFLES per iteration"),
    "auditing": lambda report: all(
        "| offline/random `" in section(section(report, "### Online auditing (AgentForesight)"), f"#### {benchmark}")
        for benchmark in ("agentrx/tau_retail", "who_and_when/algorithm_generated", "who_and_when/hand_crafted"))
    and " | online_auditor | " in section(report, "### Online auditing (AgentForesight)")
    and "FAR on prefix controls" in section(report, "#### False alarms: prefix controls beside complete runs")
    and all(" n=" in cell and "tau_retail" in cell  # --limit 2 took a failure and a safe run of AgentRx
            for cell in column(section(report, "#### False alarms: prefix controls beside complete runs"),
                               "FAR on complete runs")),
    "generated-table1": lambda report: all(
        f"### generated/{system}" in section(report, "## Table 1: every method vs the baseline `all_at_once`")
        and f"| generated/{system} | offline/random " in section(report, "## Power: the smallest gain Table 1's test detects")
        for system in ("cortex", "trading")),
}
"""Recipe -> does its report hold the table it promises (read from the offline run's report.md)."""


@pytest.mark.e2e
@pytest.mark.parametrize("name", RECIPE_NAMES)
def test_each_recipe_runs_as_the_card_shows(name: str, tmp_path: Path):
    assert sweep(offline(card_sweeps()[name], tmp_path)) == 0
    logs = list_eval_logs(str(tmp_path / "logs"))
    assert len(logs) == len(recipe(name).runs)
    assert all(read_eval_log(log, header_only=True).status == "success" for log in logs)
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert PROMISES[name](report), report[:4000]
    assert_settings_in_words(name, report, json.loads((tmp_path / "report" / "manifest.json").read_text()))
    assert_reproduction_summary(name, report)


def assert_reproduction_summary(name: str, report: str) -> None:
    """The report opens with one line per published cell of its recipe: ours with the difference
    where a configuration matches (a cell that names no model matches any), else why not (the
    offline model is no paper's model)."""
    cells = [c for c in load_published() if name in c.recipes]
    assert cells
    summary = section(report, "## Reproduction summary").split("\nNotes:\n")[0]  # the report's notes follow
    assert report.index("## Reproduction summary") < report.index("## Logs")
    lines = [line for line in summary.splitlines() if line.startswith("- ")]
    assert len(lines) == len({c.id for c in cells}), summary[:3000]
    assert all(" published " in line and ("not reproduced here (" in line or ", difference " in line)
               for line in lines), summary[:3000]
    named = [line for line in lines if "not reproduced here (no " in line and " run; ran offline/random" in line]
    assert named or name == "generated-table1", summary[:3000]  # generated sessions: no paper model's benchmark


def assert_settings_in_words(name: str, report: str, manifest: dict) -> None:
    """Every configuration is in the legend with all its settings in words; where a benchmark has
    several, its tables name each by what differs (who-and-when: the reference-answer setting)."""
    legend = section(report, "## Configurations")
    for config, contents in manifest["configs"].items():
        assert f"- `{config}` {contents['model']} (" in legend and settings_text(contents) in legend, (config, legend)
    if name == "who-and-when":
        for subset in ("who_and_when/algorithm_generated", "who_and_when/hand_crafted"):
            shown = section(section(report, "## Who&When accuracy per model and method"), f"### {subset}")
            assert "offline/random · with reference answer `" in shown, shown[:2000]
            assert "offline/random · without reference answer `" in shown, shown[:2000]
        assert report.count("with reference answer") > 4


@pytest.mark.e2e
def test_a_failed_log_fails_the_sweep_and_no_report_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A server whose replies are malformed: the task ends with status error (Inspect would exit
    0); the sweep exits 1, names the failed log and writes no report; `blame check` agrees."""
    with serve() as server:  # a process of its own: Inspect keeps a vllm/ model's server per process
        env = {**os.environ, "VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "test", "INSPECT_DISPLAY": "none"}
        result = subprocess.run(
            [str(Path(sys.executable).parent / "blame"), "sweep", "poirot-complexity", "--model", f"vllm/{MALFORMED_MODEL}",
             "--limit", "1", "--retry-attempts", "0", "--log-dir", str(tmp_path / "logs"), "--out", str(tmp_path / "report")],
            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    assert "of 2 logs succeeded; no report written" in result.stderr and "error" in result.stderr
    assert not (tmp_path / "report").exists()
    assert main(["check", str(tmp_path / "logs")]) == 1
    assert "logs did not succeed" in capsys.readouterr().err


def test_check_passes_only_when_every_log_succeeded(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["check", str(tmp_path)]) == 1
    assert "no eval logs" in capsys.readouterr().err
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        from inspect_ai import eval as inspect_eval

        from tasks.blame_cortex import blame_cortex
        inspect_eval(blame_cortex(solver="floor_most_frequent"), model="offline/random", limit=1,
                     log_dir=str(tmp_path))
    assert main(["check", str(tmp_path)]) == 0
    assert "all 1 logs succeeded" in capsys.readouterr().out


def test_bad_sweep_arguments_are_one_line(capsys: pytest.CaptureFixture[str]):
    assert main(["sweep", "poirot-tabel1", "--model", "offline/random"]) == 2
    assert "unknown recipe 'poirot-tabel1'; valid: poirot-table1" in capsys.readouterr().err
    assert main(["sweep", "raffles", "--model", "offline/random", "--limit", "0"]) == 2
    assert "--limit must be an integer in 1..1000000, got 0" in capsys.readouterr().err
    assert main(["sweep", "raffles"]) == 2
    assert "give a RECIPE and --model" in capsys.readouterr().err
