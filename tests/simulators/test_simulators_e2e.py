"""A generated folder of each system runs through ``inspect eval tasks/trajectories.py`` with the
offline model: a successful log, scored by the vector scorer (and the listed failures)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from blame.schema import Attribution
from simulators import generate, systems

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")


@pytest.mark.e2e
@pytest.mark.parametrize("system_name", sorted(systems()))
def test_a_generated_folder_runs_through_inspect_eval(system_name: str, tmp_path: Path) -> None:
    folder = tmp_path / "generated"
    generate(system_name, 6, 1, folder, max_faults=2, safe_share=0.3)
    command = [INSPECT, "eval", "tasks/trajectories.py", "-T", f"data_dir={folder}", "--model", "offline/random",
               "--limit", "2", "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    assert "exact" in {s.name for s in log.results.scores}
    for sample in log.samples:
        Attribution.model_validate_json(sample.output.completion)
        assert "vector" in sample.scores
