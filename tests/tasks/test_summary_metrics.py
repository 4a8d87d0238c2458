"""The summary Inspect prints at the end of an eval: the headline and a handful of companions.

BLAME: exact (headline, with stderr), Hamming, valid share, micro-F1; Who&When: agent, step,
joint (headline), valid share. ``-T per_dimension_metrics=true`` brings every metric back; the
per-sample values (per-dimension counts, step-within-k) are in the sample scores either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from tasks.blame_cortex import blame_cortex
from tasks.who_and_when import who_and_when


def run(task, tmp_path: Path):
    [log] = inspect_eval(task, model="offline/random", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.results is not None
    return log, {s.name: set(s.metrics) for s in log.results.scores}


def test_blame_summary_and_per_dimension_switch(tmp_path: Path):
    """Four blocks by default, micro-F1 equal to 2TP/(2TP+FP+FN) over the samples' counts;
    with per_dimension_metrics=true each dimension's precision/recall/F1 and the fault groups."""
    log, blocks = run(blame_cortex(solver="all_at_once"), tmp_path / "a")
    assert blocks == {"exact": {"accuracy", "stderr"}, "hamming": {"mean"}, "valid": {"accuracy"}, "vector": {"micro_f1"}}
    counts = {kind: sum(v for s in log.samples for k, v in s.scores["vector"].value.items() if k.startswith(kind + "__"))
              for kind in ("tp", "fp", "fn")}
    denominator = 2 * counts["tp"] + counts["fp"] + counts["fn"]
    micro = next(s for s in log.results.scores if s.name == "vector").metrics["micro_f1"].value
    assert micro == pytest.approx(2 * counts["tp"] / denominator)
    assert any(k.startswith("tp__") for k in log.samples[0].scores["vector"].value)  # counts stay per sample

    _, blocks = run(blame_cortex(solver="all_at_once", per_dimension_metrics=True), tmp_path / "b")
    assert "grouped_all" in blocks["exact"] and {"doctor_precision", "doctor_recall", "doctor_f1", "macro_f1"} <= blocks["vector"]


def test_who_and_when_summary_and_switch(tmp_path: Path):
    """agent, step, joint and valid by default; step-within-k and the substring rule on request."""
    log, blocks = run(who_and_when(subset="hand_crafted"), tmp_path / "a")
    assert set(blocks) == {"agent", "step", "joint", "valid"}
    assert "step_within_1" in log.samples[0].scores["attribution"].value
    _, blocks = run(who_and_when(subset="hand_crafted", per_dimension_metrics=True), tmp_path / "b")
    assert {"step_within_1", "ww_agent_substring", "ww_step_substring"} <= set(blocks)
