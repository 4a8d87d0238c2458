"""Epochs are replicates of a case, not evidence, in a report over real offline eval logs.

The deterministic ``offline/first`` model with ``all_at_once`` and the stand-in POIROT (whose
consensus is planted per case, analysis_logs.fake_poirot) give the same outcome in every epoch of a
case, so three epochs hold no more evidence than one: Table 1 must print the same p."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from analysis_logs import fake_poirot

from analysis.frames import read_logs
from analysis.significance import mcnemar_exact
from analysis.tables import table1


def _logs(folder: Path, epochs: int) -> Path:
    from inspect_ai import eval as inspect_eval

    from solvers.all_at_once import all_at_once
    from tasks.blame_cortex import blame_cortex

    for solver in (all_at_once(), fake_poirot()):
        inspect_eval(blame_cortex(), model="offline/first", solver=solver, epochs=epochs, display="none",
                     log_dir=str(folder))
    return folder


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory):
    one = read_logs(_logs(tmp_path_factory.mktemp("one_epoch"), 1), progress=None).samples
    three = read_logs(_logs(tmp_path_factory.mktemp("three_epochs"), 3), progress=None).samples
    return one, three


def test_three_identical_epochs_give_the_same_table1_p_as_one(frames) -> None:
    one, three = frames
    assert (three.groupby(["protocol", "case"])["correct"].nunique() == 1).all()  # identical epochs
    t1, _ = table1(one)
    t3, _ = table1(three)
    cols = ["group", "p_value", "gain_points", "ci_low", "ci_high", "n_cases", "test"]
    pd.testing.assert_frame_equal(t1[cols].reset_index(drop=True), t3[cols].reset_index(drop=True))
    assert t1.set_index("group").loc["overall", "p_value"] == pytest.approx(0.125)  # 4 discordant pairs, all for POIROT: 2 / 2^4
    assert (t3["n_treatment"] == 3 * t1["n_treatment"]).all()


def test_one_epoch_table1_p_is_exact_mcnemar_on_the_logged_outcomes(frames) -> None:
    one, _ = frames
    wide = one.pivot_table(index="case", columns="method", values="correct")
    b = int(((wide["poirot"] == 1) & (wide["all_at_once"] == 0)).sum())
    c = int(((wide["poirot"] == 0) & (wide["all_at_once"] == 1)).sum())
    assert b + c > 0  # the planted consensus differs from the judge on some cases
    overall = table1(one)[0].set_index("group").loc["overall"]
    assert overall["test"] == "sign-flip-exact"
    assert overall["p_value"] == pytest.approx(mcnemar_exact(b, c))
