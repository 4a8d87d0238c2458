"""The agentrx task: subsets and their counts, framing, scorers and headline, argument errors."""

from __future__ import annotations

import pytest

from blame.arguments import ArgumentError
from blame.state import FRAMING_KEY, KNOWN_FAILURE, UNKNOWN_OUTCOME
from tasks.agentrx import agentrx


def test_labelled_subsets_are_known_failures_scored_against_the_root_cause() -> None:
    task = agentrx(subset="magentic_one,tau_retail")
    assert len(task.dataset) == 44 + 29 and task.metadata[FRAMING_KEY] == KNOWN_FAILURE
    assert [s.metadata["source"] for s in task.dataset][::72] == ["agentrx/magentic_one", "agentrx/tau_retail"]
    assert task.metadata["datasets"]["agentrx"]["verification"].startswith("verified: 48 files")


def test_safe_runs_make_the_whole_task_unknown_outcome_and_audited() -> None:
    task = agentrx(subset="all")
    assert len(task.dataset) == 29 + 73 + 44
    assert {s.metadata[FRAMING_KEY] for s in task.dataset} == {UNKNOWN_OUTCOME}
    assert sum(s.target == "safe" for s in task.dataset) == 73
    assert task.headline_metric.scorer == "auditing"


def test_magentic_one_samples_show_a_model_exactly_what_their_who_and_when_twins_show() -> None:
    """The twin's label is in metadata for the report only: every input is byte-identical to the
    Who&When task's input for the same session, and the model's view carries no meta."""
    from blame.state import trajectory_from_metadata
    from tasks.who_and_when import who_and_when

    task = agentrx(subset="magentic_one")
    twins = {sample.id: sample for sample in who_and_when(subset="hand_crafted").dataset}
    assert task.metadata["datasets"]["who_and_when"]["revision"].startswith("f4d2b6d")
    for sample in task.dataset:
        twin = twins[sample.metadata["who_and_when_id"]]
        assert sample.input == twin.input, sample.id
        label = trajectory_from_metadata(twin.metadata).label
        assert (sample.metadata["who_and_when_agent"], sample.metadata["who_and_when_step"]) == (label.agent, label.step)
        assert trajectory_from_metadata(sample.metadata).model_view().meta == {}


@pytest.mark.parametrize("subset", ["", "tau", "tau_retail,nope", "all,tau_retail", 3])
def test_a_bad_subset_is_one_line_naming_the_valid_values(subset: object) -> None:
    with pytest.raises(ArgumentError, match=r"Invalid argument subset=.*tau_retail, tau_retail_safe, magentic_one"):
        agentrx(subset=subset)  # type: ignore[arg-type]
