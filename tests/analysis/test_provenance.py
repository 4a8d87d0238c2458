"""The report's reproducibility block: the `inspect eval` line it prints for a log reruns that log's
configuration (same task, method, options and configuration hash), and tokens per method are the
sums of the sample frame."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from analysis.configs import log_config
from analysis.provenance import tokens_per_method
from analysis.report import run_report

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _eval(argv: list[str], log_dir: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "INSPECT_DISPLAY": "none"}
    result = subprocess.run([*argv, "--log-dir", str(log_dir)], env=env, cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


def _commands(report: str) -> list[str]:
    block = report[report.index("# Reproducibility"):]
    code = block[block.index("```\n") + 4:]
    return [line for line in code[:code.index("```")].splitlines() if line.startswith("inspect eval")]


@pytest.mark.e2e
def test_the_printed_command_reruns_the_same_configuration(tmp_path: Path):
    first = tmp_path / "first"
    _eval(["inspect", "eval", "tasks/who_and_when.py", "-T", "subset=hand_crafted", "-T", "with_reference_answer=true",
           "--solver", "solvers/all_at_once.py@all_at_once", "-S", "max_log_chars=3000", "--model", "offline/random",
           "--temperature", "0.5", "--limit", "2"], first)
    run_report(first, tmp_path / "report", figures=False, progress=None, command="blame report first")
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "- Models: `offline/random`; roles: none" in report
    [command] = _commands(report)
    assert "-T with_reference_answer=true" in command and "-S max_log_chars=3000" in command
    assert "--temperature 0.5" in command and "--limit 2" in command
    second = tmp_path / "second"
    _eval(shlex.split(command), second)
    old, new = (read_eval_log(next(iter(list_eval_logs(str(d)))), header_only=True) for d in (first, second))
    assert log_config(old) == log_config(new)  # the same configuration contents, so the same hash
    assert (old.eval.solver, old.eval.solver_args, old.eval.task_args) == (new.eval.solver, new.eval.solver_args,
                                                                           new.eval.task_args)
    assert new.results.total_samples == 2


def test_tokens_per_method_sums_the_frame():
    samples = pd.DataFrame({
        "method": ["a", "a", "b"], "calls": [1.0, 2.0, 4.0], "input_tokens": [10.0, 20.0, 5.0],
        "output_tokens": [1.0, 2.0, float("nan")], "reasoning_tokens": [float("nan")] * 3,
    })
    table = tokens_per_method(samples).set_index("method")
    assert table["trials"].tolist() == [2, 1] and table["calls"].tolist() == [3.0, 4.0]
    assert table["input_tokens"].tolist() == [30.0, 5.0]
    assert table.loc["a", "output_tokens"] == 3.0 and pd.isna(table.loc["b", "output_tokens"])  # none reported: not 0
    assert table["reasoning_tokens"].isna().all()
