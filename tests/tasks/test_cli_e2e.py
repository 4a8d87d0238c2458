"""End-to-end through the real ``inspect`` CLI with the offline model: a successful log with scores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from blame.schema import Attribution
from solvers import SOLVERS

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")

CASES = [
    ("tasks/who_and_when.py", ["-T", "subset=algorithm_generated"], "attribution", "agent"),
    ("tasks/who_and_when.py", ["-T", "subset=hand_crafted", "--solver", "solvers/all_at_once.py@all_at_once"], "attribution", "joint"),
    ("tasks/blame_cortex.py", [], "vector", "exact"),
    ("tasks/blame_trading.py", ["-T", "solver=all_at_once"], "vector", "exact"),
]


def run_inspect(task_file: str, extra: list[str], log_dir: Path, limit: int = 3) -> subprocess.CompletedProcess[str]:
    command = [INSPECT, "eval", task_file, "--model", "offline/random", "--limit", str(limit),
               "--log-dir", str(log_dir), "--display", "none", *extra]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.mark.e2e
@pytest.mark.parametrize("task_file,extra,scorer,key", CASES)
def test_inspect_eval_cli(task_file: str, extra: list[str], scorer: str, key: str, tmp_path: Path) -> None:
    """`inspect eval tasks/<task>.py --model offline/random` writes a successful, scored log."""
    result = run_inspect(task_file, extra, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"
    assert log.samples is not None and len(log.samples) == 3
    names = {s.name for s in log.results.scores}
    assert key in names, names
    for sample in log.samples:
        Attribution.model_validate_json(sample.output.completion)
        assert scorer in sample.scores
        assert sample.model_usage, "token usage must be recorded"


@pytest.mark.e2e
def test_missing_dataset_is_a_clear_error(tmp_path: Path) -> None:
    """A missing dataset names every place looked and how to get the data, not a bare traceback."""
    env_home = tmp_path / "home"
    result = subprocess.run(
        [INSPECT, "eval", "tasks/blame_cortex.py", "--model", "offline/random", "--limit", "1",
         "-T", f"data_dir={tmp_path / 'nowhere'}", "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={"PATH": str(Path(sys.executable).parent), "HOME": str(env_home), "COLUMNS": "2000",
             "BLAME_BENCH_CACHE": str(tmp_path / "cache"), "BLAME_DIR": str(tmp_path / "also-nowhere")},
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output  # a PrerequisiteError: one message
    assert "git clone https://github.com/11inaki11/BLAME" in output
    assert str(tmp_path / "nowhere") in output


@pytest.mark.e2e
@pytest.mark.parametrize("solver_name", sorted(SOLVERS))
def test_every_solver_loads_from_its_file(solver_name: str, tmp_path: Path) -> None:
    """`--solver solvers/<module>.py@<name>` works for every registered solver (Inspect loads the
    file outside sys.modules, where e.g. @dataclass breaks), and -S arguments reach it."""
    module = SOLVERS[solver_name].__module__.replace(".", "/")
    result = run_inspect("tasks/blame_trading.py", ["--solver", f"{module}.py@{solver_name}"], tmp_path, limit=1)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and log.eval.solver == f"{module}.py@{solver_name}"
