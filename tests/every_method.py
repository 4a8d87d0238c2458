"""Every method of the suite on a trajectory folder, with the offline model, as a user attributes
their own imported runs (docs/own_runs.md): shared by the tests of ``blame data import``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from solvers import SOLVERS
from tasks.trajectories import trajectories

REPO = Path(__file__).resolve().parents[1]


def attribute_with_every_method(folder: Path, log_dir: Path) -> tuple[EvalLog, list[EvalLog]]:
    """``inspect eval tasks/trajectories.py -T data_dir=FOLDER --model offline/random`` through
    the CLI (the default method), then every other method in-process (one ``eval``, four tasks at
    a time), all logging to ``log_dir``: (the CLI's log, the others' logs), each of status success."""
    inspect = Path(sys.executable).parent / "inspect"
    result = subprocess.run([str(inspect), "eval", "tasks/trajectories.py", "-T", f"data_dir={folder}", "--model",
                             "offline/random", "--log-dir", str(log_dir), "--display", "none"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [cli_log] = [read_eval_log(info) for info in list_eval_logs(str(log_dir))]
    assert cli_log.status == "success", cli_log.error
    others = [trajectories(data_dir=str(folder), solver=name) for name in SOLVERS if name != "all_at_once"]
    logs = inspect_eval(others, model="offline/random", log_dir=str(log_dir), display="none", max_tasks=4)
    assert [log.status for log in logs] == ["success"] * len(others), [log.error for log in logs]
    return cli_log, logs
