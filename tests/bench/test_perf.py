"""The benchmark's measurement functions (bench/reuse.py, bench/report.py), on hand-built calls
with hand-computed values: what results/bench.md reports is only as right as these."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput

from bench.report import break_even_latency
from bench.reuse import (
    LOG_END,
    common_prefix,
    layout_check,
    prefix_reuse,
    rendered_call,
    unavoidable_chars,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def call(*texts: str, start: float = 0.0, end: float = 1.0) -> ModelEvent:
    """A model event whose input is one user message per text, sent at ``start`` s, done at ``end`` s."""
    return ModelEvent(
        model="offline/random",
        input=[ChatMessageUser(content=t) for t in texts],
        tools=[],
        tool_choice="none",
        config=GenerateConfig(),
        output=ModelOutput.from_content("offline/random", "ok"),
        timestamp=T0 + timedelta(seconds=start),
        completed=T0 + timedelta(seconds=end),
    )


def test_a_call_is_rendered_as_role_and_content_per_message() -> None:
    assert rendered_call(call("ab", "c")) == "<|user|>\nab\n<|user|>\nc\n"


def test_common_prefix() -> None:
    assert common_prefix("abcdef", "abcxyz") == 3
    assert common_prefix("abc", "abc") == 3
    assert common_prefix("", "abc") == 0
    assert common_prefix("xbc", "abc") == 0


def test_prefix_reuse_counts_the_longest_prefix_sent_before() -> None:
    # texts: "<|user|>\nabcdef\n" (16), "<|user|>\nabcxyz\n" (16), "<|user|>\nabcdeQ\n" (16)
    events = [call("abcdef", start=0, end=1), call("abcxyz", start=0.5, end=2), call("abcdeQ", start=3, end=4)]
    # second call: "<|user|>\nabc" = 12 from the first; third: "<|user|>\nabcde" = 14 from the first
    assert prefix_reuse(events) == (12 + 14, 48)
    # done-before: the second call was sent while the first was still running, so it reuses nothing
    assert prefix_reuse(events, done_before=True) == (14, 48)


def test_unavoidable_chars_of_the_auditor_is_the_first_call_plus_each_added_step() -> None:
    header, step0, step1 = "H" * 10, "\n\n[step 0] a\nx", "\n\n[step 1] b\nyy"
    first = call(header + step0 + LOG_END + "\n\nThis is the log up to step 0.")
    second = call(header + step0 + step1 + LOG_END + "\n\nThis is the log up to step 1.")
    assert unavoidable_chars("auditor[seq]", [first, second]) == len(rendered_call(first)) + len(step1)


def test_layout_check_of_the_auditor_follows_its_rendered_prompts() -> None:
    """The auditor's real prompts (header, log blocks, end-of-log marker, question) on a Who&When
    log: every consecutive pair shares everything before the shorter prompt's marker; a prompt
    whose log differs before that point fails the check."""
    from bench.configs import TASKS
    from blame.render import RenderBudget, join_blocks, render_prefix_blocks
    from blame.state import trajectory_from_metadata
    from solvers.online_auditor import audit_header, audit_messages

    trajectory = trajectory_from_metadata(TASKS["ww_hc"]().dataset[0].metadata)
    blocks, _ = render_prefix_blocks(trajectory)
    header = audit_header(trajectory, RenderBudget())
    events = [call(*(m.text for m in audit_messages(header, join_blocks(blocks[: k + 1]), k))) for k in range(4)]
    assert all(LOG_END in rendered_call(e) for e in events)
    assert layout_check("auditor[seq]", events) == (3, 3)
    changed = blocks[0][:-1] + ("A" if blocks[0][-1] != "A" else "B")  # same length, other last character
    forged = call(*(m.text for m in audit_messages(header, join_blocks([changed, *blocks[1:3]]), 2)))
    assert layout_check("auditor[seq]", [events[0], events[1], forged, events[3]]) == (1, 3)


def test_unavoidable_chars_of_poirot_adds_each_further_persona_turn_beyond_its_shared_prefix() -> None:
    context, own_a, own_b = "C" * 20, "VIEW[0]-[1] aaaa", "VIEW[0]-[1] bb"  # share "VIEW[0]-[1] " (12)
    events = [
        call(context, own_a, "self-assess"),
        call(context, own_b, "self-assess"),
        call(context, own_a, "vote"),  # a's turn again: nothing unavoidable
    ]
    assert unavoidable_chars("poirot", events) == len(rendered_call(events[0])) + len(own_b) - 12


def test_unavoidable_chars_of_other_methods_is_the_first_call() -> None:
    events = [call("abc"), call("abd")]
    assert unavoidable_chars("raffles", events) == len(rendered_call(events[0]))
    assert unavoidable_chars("raffles", []) == 0


def test_break_even_latency() -> None:
    # 4 rounds at 0.2 s took 0.88 s: 0.08 s of extra time; within 1.15 once 4 x L x 0.15 >= 0.08
    row = {"total_time": 0.88, "rounds": 4, "latency": 0.2}
    assert break_even_latency(row) == pytest.approx(0.08 / 0.6)


def test_walk_reuse_stops_where_the_label_says_on_the_real_data() -> None:
    """On Who&When AG: a perfect auditor makes label.step + 1 calls, the full walk one per step;
    and the full walk, a superset of the same prompts, reuses at least as large a share."""
    from bench.configs import TASKS
    from bench.reuse import walk_reuse
    from blame.state import trajectory_from_metadata

    trajectories = [trajectory_from_metadata(s.metadata) for s in TASKS["ww_ag"]().dataset]
    result = walk_reuse("ww_ag")
    labelled_share, labelled_calls = result["labelled step"]
    full_share, full_calls = result["full walk"]
    assert labelled_calls == pytest.approx(sum(t.label.step + 1 for t in trajectories) / len(trajectories))
    assert full_calls == pytest.approx(sum(len(t.steps) for t in trajectories) / len(trajectories))
    assert 0 < labelled_share < full_share < 1
