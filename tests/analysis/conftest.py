"""Session fixtures: eval logs made once with the offline model (see analysis_logs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from analysis_logs import make_logs


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """CORTEX x {all_at_once, stand-in POIROT} x 2 offline models x 2 epochs, 4 Who&When
    hand-crafted samples, and one failed log."""
    return make_logs(tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="session")
def baseline_only_log_dir(log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies of the successful all-at-once logs of ``log_dir``: no POIROT, no failed log."""
    from inspect_ai.log import read_eval_log

    folder = tmp_path_factory.mktemp("baseline_logs")
    for path in sorted(log_dir.glob("*.eval")):
        header = read_eval_log(str(path), header_only=True)
        if header.status == "success" and all(step.solver == "all_at_once" for step in header.plan.steps):
            shutil.copy(path, folder)
    return folder


@pytest.fixture(scope="session")
def logset(log_dir: Path):
    from analysis.frames import read_logs

    return read_logs(log_dir, progress=None, warn=lambda message: None)


@pytest.fixture(scope="session")
def config_logs(tmp_path_factory: pytest.TempPathFactory):
    """The logs of ``analysis_logs.make_config_logs``, read with their outcomes and complexity."""
    from analysis_logs import make_config_logs

    from analysis.complexity import add_complexity, complexity_frame
    from analysis.frames import read_logs
    from analysis.outcomes import choose_outcomes

    logs = read_logs(make_config_logs(tmp_path_factory.mktemp("config_logs")), progress=None, warn=lambda m: None)
    samples, _ = choose_outcomes(logs.samples, {})
    return add_complexity(samples, complexity_frame(samples))
