"""The Inspect-log importer on logs a real Inspect run wrote: a supervisor handing off to two
agents with tools (tests/blame/multi_agent_task.py, scripted mockllm models)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from blame.errors import DataFormatError
from blame.inspect_log import load_inspect_logs, read_inspect_log

TASK = os.path.relpath(Path(__file__).with_name("multi_agent_task.py"))  # Inspect takes relative task files


def _run(log_dir: Path, **task_args: str) -> Path:
    [log] = inspect_eval(TASK, task_args=task_args, model="mockllm/model", log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module")
def failed_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("failed"))


EXPECTED = [  # (agent, kind, recipient, tool_calls) of every step, in order
    ("user", "human", None, []),
    ("supervisor", "tool_call", None, ["transfer_to_researcher"]),
    ("system", "system", "researcher", []),
    ("researcher", "tool_call", None, ["search"]),
    ("search", "tool_result", None, []),
    ("researcher", "tool_call", None, ["submit"]),
    ("submit", "tool_result", None, []),
    ("supervisor", "tool_call", None, ["transfer_to_coder"]),
    ("system", "system", "coder", []),
    ("coder", "tool_call", None, ["word_count"]),
    ("word_count", "tool_result", None, []),
    ("coder", "tool_call", None, ["submit"]),
    ("submit", "tool_result", None, []),
    ("supervisor", "tool_call", None, ["submit"]),
    ("submit", "tool_result", None, []),
]


def test_every_sample_is_a_failed_run_with_agents_tools_and_hand_offs(failed_log: Path) -> None:
    """Agents come from the agent spans (the researcher's search is the researcher's, though
    Inspect's hand-off filter turned it into text in the supervisor's messages), tools are
    software components with their own steps, hand-offs are framework steps naming their target,
    and every step keeps the id of the message or tool event it came from."""
    log = read_eval_log(str(failed_log))
    trajectories = read_inspect_log(failed_log)
    assert [t.id for t in trajectories] == ["q1", "q2"]
    for trajectory, sample in zip(trajectories, log.samples):
        assert [(s.agent, s.kind, s.recipient, s.tool_calls) for s in trajectory.steps] == EXPECTED
        assert [(c.id, c.kind) for c in trajectory.system.components] == [
            ("user", "human"), ("supervisor", "agent"), ("researcher", "agent"), ("search", "software"),
            ("submit", "software"), ("coder", "agent"), ("word_count", "software")]
        ids = {m.id for m in sample.messages} | {e.uuid for e in sample.events}
        assert all(s.source_id in ids for s in trajectory.steps)
        assert trajectory.steps[4].content == "Lyon is the capital of France (a page from 1793)."
        assert trajectory.steps[3].content == 'Searching.\n-> search({"query": "capital of France"})'
        assert (trajectory.outcome, trajectory.label, trajectory.task) == ("failed", None, sample.input)
        assert trajectory.meta["score"] == "I" and trajectory.meta["scorer"] == "match"
        assert {(link.source, link.target) for link in trajectory.system.links} >= {
            ("supervisor", "researcher"), ("researcher", "search"), ("coder", "word_count")}


def test_the_failure_values_are_configurable(failed_log: Path) -> None:
    """With C as the only failure value no sample failed: refused in one line naming the file;
    with every sample kept, each is a run that succeeded."""
    with pytest.raises(DataFormatError) as error:
        read_inspect_log(failed_log, failures=("C",))
    assert error.value.field == "samples" and "no failed sample (2 succeeded" in str(error.value)
    assert str(failed_log) in str(error.value) and "\n" not in str(error.value)
    kept = read_inspect_log(failed_log, failures=("C",), keep_all=True)
    assert [t.outcome for t in kept] == ["succeeded", "succeeded"] and all(t.safe for t in kept)
    with pytest.raises(DataFormatError, match="no failed sample"):
        read_inspect_log(failed_log, scorer="nonexistent")


def test_a_log_with_no_failed_sample_is_one_line(tmp_path: Path) -> None:
    passed = _run(tmp_path, answer="Paris")
    with pytest.raises(DataFormatError) as error:
        load_inspect_logs(passed)
    assert str(error.value).startswith(f"{passed}: field 'samples': no failed sample (2 succeeded")


def test_a_log_without_model_events_is_read_from_its_messages(failed_log: Path, tmp_path: Path) -> None:
    """Hand-offs still name their agents (Inspect's ``[name]`` prefix, removed from the text); the
    top-level agent, which no prefix names, is ``assistant``."""
    log = read_eval_log(str(failed_log))
    for sample in log.samples:
        sample.events = []
    write_eval_log(log, str(tmp_path / "no_events.json"))
    [first, _] = read_inspect_log(tmp_path / "no_events.json")
    agents = [s.agent for s in first.steps]
    assert agents[:4] == ["user", "assistant", "system", "researcher"] and "coder" in agents
    assert first.steps[3].content == "Searching.\nsearch(query='capital of France')"
    assert first.steps[5].agent == "researcher" and first.steps[6].kind == "system"


def test_a_file_that_is_not_a_log_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(DataFormatError) as error:
        load_inspect_logs(bad)
    assert str(error.value).startswith(f"{bad}: field '<file>': not a readable Inspect log") and "\n" not in str(error.value)
