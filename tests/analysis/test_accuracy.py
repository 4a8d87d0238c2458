"""Coverage against accuracy in the per-method accuracy table: an abstention ("no verified fault"
on a known failure) is a miss in ``accuracy`` and is counted apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from inspect_ai import eval as inspect_eval

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from analysis.accuracy import accuracy_markdown, accuracy_table
from analysis.frames import read_logs
from solvers.propose_verify import propose_verify
from tasks.who_and_when import who_and_when


def frame(rows: list[tuple[str, str, float, bool]]) -> pd.DataFrame:
    """(protocol, case, correct, abstained) rows of one benchmark, model and configuration."""
    return pd.DataFrame([{"benchmark": "ww", "outcome": "attribution.joint", "model": "m", "config": "c",
                          "protocol": p, "case": case, "correct": correct, "abstained": abstained,
                          "label_informed": False} for p, case, correct, abstained in rows])


def test_abstentions_are_misses_counted_apart_with_coverage_and_answered_accuracy() -> None:
    """propose_verify: case a right then abstains, case b wrong, case c abstains twice.
    accuracy = mean(0.5, 0, 0) = 1/6; abstained 3 of 6 trials; coverage 0.5; answered accuracy
    = mean(1, 0, 0) over the three answered trials = 1/3. The judge never abstains."""
    rows = [("propose_verify", "a", 1.0, False), ("propose_verify", "a", 0.0, True),
            ("propose_verify", "b", 0.0, False), ("propose_verify", "b", 0.0, False),
            ("propose_verify", "c", 0.0, True), ("propose_verify", "c", 0.0, True),
            ("all_at_once", "a", 1.0, False), ("all_at_once", "b", 1.0, False), ("all_at_once", "c", 0.0, False)]
    table = accuracy_table(frame(rows)).set_index("protocol")
    pv, judge = table.loc["propose_verify"], table.loc["all_at_once"]
    assert np.isclose(pv["accuracy"], 1 / 6) and pv["abstained"] == 3 and pv["trials"] == 6
    assert np.isclose(pv["coverage"], 0.5) and np.isclose(pv["answered_accuracy"], 1 / 3)
    assert judge["abstained"] == 0 and judge["coverage"] == 1 and np.isclose(judge["answered_accuracy"], 2 / 3)
    text = accuracy_markdown(accuracy_table(frame(rows)))
    assert "| propose_verify | 16.7 |" in text and "coverage %" in text
    assert "| 50.0 | 33.3 |" in text and "| 100.0 | 66.7 |" in text


def test_no_abstention_no_coverage_columns_and_all_abstained_has_no_answered_accuracy() -> None:
    assert "coverage %" not in accuracy_markdown(accuracy_table(frame([("all_at_once", "a", 1.0, False)])))
    table = accuracy_table(frame([("propose_verify", "a", 0.0, True)]))
    assert table["coverage"].iloc[0] == 0 and np.isnan(table["answered_accuracy"].iloc[0])


def test_the_sample_frame_reads_abstentions_from_the_log(tmp_path: Path) -> None:
    """offline/random verifiers rarely say yes four times, so propose-and-verify abstains on a
    known failure; the frame's ``abstained`` is what the Attribution says."""
    inspect_eval(who_and_when(subset="algorithm_generated"), solver=propose_verify(proposers=1, verifiers=3),
                 model="offline/random", limit=2, display="none", log_dir=str(tmp_path))
    samples = read_logs(tmp_path, progress=None).samples
    assert samples["abstained"].dtype == bool and len(samples) == 2
    assert samples["abstained"].tolist() == (samples["pred_agent"].isna() & ~samples["invalid"]).tolist()
    assert samples["abstained"].any()


def test_a_configuration_is_named_by_its_settings() -> None:
    """The section of a configuration is ``config_label``: model, settings in words, hash; a frame
    without the ``setting`` column (older logs read by older code) has no words."""
    rows = [("all_at_once", "a", 1.0, False), ("all_at_once", "b", 0.0, False)]
    worded = accuracy_table(frame(rows).assign(setting="judge=openai/gpt-4o"))
    assert worded["setting"].tolist() == ["judge=openai/gpt-4o"]
    assert "### m · judge=openai/gpt-4o `c`\n" in accuracy_markdown(worded)
    assert "### m `c`\n" in accuracy_markdown(accuracy_table(frame(rows)))
