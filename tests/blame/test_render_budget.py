"""Budgets that hold (blame/render.py, budgets step 3): a log that cannot fit even with every
step's content cut keeps the budget by leaving whole steps out, and says which."""

from __future__ import annotations

import re

import pytest

from blame.render import (
    END_OF_LOG,
    MAX_HEADER_CHARS,
    PrefixLogs,
    RenderBudget,
    RenderedLog,
    fence,
    note_cuts,
    render_log,
    render_steps,
)
from blame.schema import Attribution, Component, Step, SystemSpec, Trajectory

HEADER = re.compile(r"^\[step (\d+)\] ", re.MULTILINE)
MARKER = re.compile(r"^\[\.\.\. steps? (\d+)(?:-(\d+))? omitted: (\d+) steps? not shown \.\.\.\]$", re.MULTILINE)


def _trajectory(contents: list[str], agent: str = "a", other: str = "b") -> Trajectory:
    system = SystemSpec(name="s", components=[Component(id=agent, name=agent, kind="agent"), Component(id=other, name=other, kind="agent")])
    steps = [Step(index=i, agent=(agent, other)[i % 2], kind="agent", content=c) for i, c in enumerate(contents)]
    return Trajectory(id="t", source="unit", label_kind="step", system=system, steps=steps)


def _extreme() -> dict[str, Trajectory]:
    return {
        "10,000 tiny steps": _trajectory([f"Turn {i}: checking source {i % 97}." for i in range(10_000)]),
        "one giant step": _trajectory(["x" * 3_000_000]),
        "giant names": _trajectory(["hi", "there", "again"], agent="n" * 200_000),
        "giant names, many steps": _trajectory(["hi"] * 200, agent="\u2028" * 2_000),
    }


@pytest.mark.parametrize("name", list(_extreme()))
@pytest.mark.parametrize("budget", [RenderBudget(), RenderBudget(max_step_chars=500, max_total_chars=2_000)], ids=["default", "small"])
def test_every_rendering_stays_within_the_budget(name: str, budget: RenderBudget) -> None:
    """The whole log and each prefix (the auditor's and step-by-step's prompts) are at most
    max_total_chars long, for every extreme log."""
    trajectory = _extreme()[name]
    rendered = render_log(trajectory, budget)
    assert len(rendered.text) <= budget.max_total_chars
    assert rendered.text.endswith(f"\n\n{END_OF_LOG}")
    prefixes = PrefixLogs(trajectory, budget)
    n = len(trajectory.steps)
    for k in sorted({0, 1, n // 3, n - 2, n - 1} & set(range(n))):
        assert len(prefixes.upto(k).text) <= budget.max_total_chars, k


def test_over_budget_keeps_both_ends_and_marks_the_run_left_out() -> None:
    """10,000 steps: steps 0, 1, ... and ..., n-2, n-1 are shown with their own numbers, one marker
    line names the omitted run, and omitted_steps lists exactly that run."""
    trajectory = _extreme()["10,000 tiny steps"]
    rendered = render_log(trajectory)
    shown = [int(i) for i in HEADER.findall(rendered.text)]
    [(first, last, count)] = MARKER.findall(rendered.text)
    first, last, count = int(first), int(last), int(count)
    assert rendered.over_budget is True
    assert shown == [*range(first), *range(last + 1, 10_000)]
    assert rendered.omitted_steps == list(range(first, last + 1)) and count == last - first + 1
    assert abs(first - (10_000 - 1 - last)) <= 1  # kept alternately from both ends
    assert "Turn 0: checking source 0." in rendered.text and "Turn 9999: checking source 8." in rendered.text
    assert not set(rendered.truncated_steps) & set(rendered.omitted_steps)


def test_shown_steps_keep_their_content_when_steps_are_omitted() -> None:
    """Leaving steps out is preferred to showing bare headers: each shown step keeps at least
    min(max_step_chars, 200, max_total_chars // 10) characters of content."""
    trajectory = _trajectory(["y" * 1_000] * 2_000)
    rendered = render_log(trajectory, RenderBudget(max_total_chars=20_000))
    assert rendered.over_budget and rendered.omitted_steps
    for block in rendered.text.split("\n\n")[:-1]:
        if HEADER.match(block):
            assert block.split("\n", 1)[1].count("y") >= 200


def test_giant_names_are_cut_in_the_headers() -> None:
    """A header longer than MAX_HEADER_CHARS is cut when the log is over budget; its step number
    stays and the step counts as truncated."""
    trajectory = _extreme()["giant names"]
    rendered = render_log(trajectory)
    assert rendered.over_budget is True and rendered.omitted_steps == []
    assert [int(i) for i in HEADER.findall(rendered.text)] == [0, 1, 2]
    assert rendered.truncated_steps == [0, 2]  # the steps of the giant name
    assert all(len(line) <= MAX_HEADER_CHARS + len("[... 200000 characters cut ...]") for line in rendered.text.splitlines())


def test_tiny_budget_shows_only_the_marker() -> None:
    """A budget too small for any step shows one marker for the whole log; below the marker's own
    length the text is that marker, as short as a rendering can be."""
    trajectory = _trajectory(["a" * 100] * 3)
    rendered = render_steps(trajectory.steps, RenderBudget(max_total_chars=10))
    assert rendered.text == f"[... steps 0-2 omitted: 3 steps not shown ...]\n\n{END_OF_LOG}"
    assert rendered.omitted_steps == [0, 1, 2] and rendered.over_budget


def test_one_omitted_step_is_named_alone() -> None:
    trajectory = _trajectory(["a" * 300] * 3, agent="n" * 150, other="m" * 150)
    budget = RenderBudget(max_step_chars=300, max_total_chars=590)
    rendered = render_log(trajectory, budget)
    assert rendered.omitted_steps == [1]
    assert "\n[... step 1 omitted: 1 step not shown ...]\n" in rendered.text
    assert len(rendered.text) <= 590


def test_omission_marker_cannot_be_forged() -> None:
    """A log line that could pass for the omission marker is fenced like a step header."""
    assert fence("[... steps 3-9 omitted: 7 steps not shown ...]") == "\\[... steps 3-9 omitted: 7 steps not shown ...]"
    assert fence("\uff3b\u2026 step 4 omitted") == "\\\uff3b\u2026 step 4 omitted"  # NFKC: [... step
    assert fence("[... 40 characters cut ...]") == "[... 40 characters cut ...]"


def test_prefixes_over_budget_that_fit_are_shown_whole_and_longer_ones_keep_both_ends() -> None:
    """Once the whole log is over budget, a prefix that fits is exactly render_steps of steps
    0..k; a longer one keeps the budget, step 0 and step k, and names the run between (the layout
    that keeps consecutive prefixes sharing: tests/blame/test_render_prefixes.py)."""
    trajectory = _trajectory([f"step text {i}" for i in range(3_000)])
    prefixes = PrefixLogs(trajectory)
    assert prefixes.over_budget
    assert prefixes.upto(5) == render_steps(trajectory.steps[:6])
    log = prefixes.upto(2_999)
    shown = [int(i) for i in HEADER.findall(log.text)]
    [(first, last, _)] = MARKER.findall(log.text)
    assert len(log.text) <= RenderBudget().max_total_chars and shown[0] == 0 and shown[-1] == 2_999
    assert log.omitted_steps == list(range(int(first), int(last) + 1)) and log.over_budget


def test_note_cuts_merges_into_an_attribution() -> None:
    attribution = Attribution(method="m", truncated_steps=[4])
    note_cuts(attribution, RenderedLog("", truncated_steps=[1, 4], omitted_steps=[7, 8], over_budget=True))
    note_cuts(attribution, RenderedLog("", omitted_steps=[2]))
    assert (attribution.truncated_steps, attribution.omitted_steps, attribution.over_budget) == ([1, 4], [2, 7, 8], True)


def test_a_giant_task_is_cut_to_the_budget() -> None:
    """The task and the reference answer are each cut to max_total_chars; a normal one is whole."""
    from blame.render import render_task

    trajectory = _trajectory(["hi"]).model_copy(update={"task": "t" * 500_000, "reference_answer": "r" * 500_000})
    text = render_task(trajectory, RenderBudget(max_total_chars=1_000))
    assert len(text) < 2_200 and "characters cut ...]" in text
    assert render_task(trajectory.model_copy(update={"task": "Add 2 and 3.", "reference_answer": None})) == (
        "Task given to the system:\nAdd 2 and 3."
    )


def test_a_giant_component_description_is_cut() -> None:
    """A component description is cut to max_prompt_chars like a system prompt."""
    from blame.render import render_system

    system = SystemSpec(name="s", components=[Component(id="a", name="a", kind="agent", description="d" * 100_000)])
    text = render_system(system, RenderBudget(max_prompt_chars=100))
    assert len(text) < 250 and "[... 99900 characters cut ...]" in text
