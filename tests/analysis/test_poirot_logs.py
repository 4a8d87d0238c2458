"""The analysis reads what the real POIROT solver writes (skipped where solvers/poirot.py is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from analysis.frames import read_logs
from analysis.report import run_report
from tasks.blame_cortex import blame_cortex

poirot_module = pytest.importorskip("solvers.poirot")


@pytest.fixture(scope="module")
def poirot_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("poirot_logs")
    common = {"model": "offline/random", "limit": 4, "display": "none", "log_dir": str(folder)}
    inspect_eval(blame_cortex(solver="all_at_once"), **common)
    inspect_eval(blame_cortex(), solver=poirot_module.poirot(mode="C0"), **common)
    inspect_eval(blame_cortex(), solver=poirot_module.poirot(mode="C0", weighting="uniform"), **common)
    return folder


def test_poirot_trials_votes_and_protocols(poirot_logs: Path) -> None:
    logset = read_logs(poirot_logs, progress=None)
    samples = logset.samples
    poirot = samples[samples["method"] == "poirot"]
    assert len(poirot) == 8 and (poirot["n_participants"] == poirot["n_agents"]).all()
    assert set(poirot["protocol"]) == {"poirot[weighting=proximity]", "poirot[weighting=uniform]"}
    assert set(samples.loc[samples["method"] == "all_at_once", "protocol"]) == {"all_at_once"}
    assert (poirot["n_votes"] == 3).all()
    assert len(logset.votes) == 8 * 3 and set(logset.votes["voter"]) == {"doctor", "chief", "physio_general"}
    assert logset.votes["correct"].notna().all()


def test_report_compares_each_poirot_configuration_with_the_judge(poirot_logs: Path, tmp_path: Path) -> None:
    run_report(poirot_logs, tmp_path / "out", figures=False, progress=None)
    table1 = (tmp_path / "out/tables/table1.md").read_text()
    assert "| poirot[weighting=proximity] |" in table1 and "| poirot[weighting=uniform] |" in table1
    assert "vs the baseline `all_at_once`" in table1
