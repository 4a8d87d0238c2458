"""Tests for blame/render.py: the step-numbered log text every solver shows a model."""

from __future__ import annotations

import pytest

from blame.render import (
    CUT_MARKER,
    RenderBudget,
    cut_middle,
    render_log,
    render_steps,
    render_system,
    render_task,
    step_header,
)
from blame.schema import SYSTEM_SPEAKER, Component, FaultLabel, Step, SystemSpec, Trajectory

NO_CAP = 10**9


def _system() -> SystemSpec:
    return SystemSpec(
        name="toy",
        components=[
            Component(id="Orchestrator", name="Orchestrator", kind="agent", description="plans", system_prompt="p" * 50 + "q" * 50),
            Component(id="WebSurfer", name="WebSurfer", kind="agent", system_prompt="browse"),
            Component(id="coder", name="Code Writer", kind="agent"),
            Component(id="search_api", name="Search API", kind="software", description="web search"),
            Component(id="user", name="User", kind="human"),
        ],
    )


def _steps(*contents: str) -> list[Step]:
    agents = ["Orchestrator", "WebSurfer", "coder"]
    return [Step(index=i, agent=agents[i % 3], kind="agent", content=c) for i, c in enumerate(contents)]


def _trajectory(steps: list[Step] | None = None, reference_answer: str | None = "42") -> Trajectory:
    return Trajectory(
        id="t1",
        source="unit",
        label_kind="step",
        task="What is six times seven?",
        reference_answer=reference_answer,
        system=_system(),
        steps=steps if steps is not None else _steps("hello", "world"),
        label=FaultLabel(faulty=["WebSurfer"], step=1, agent="WebSurfer"),
    )


def _length(steps: list[Step], limit: int) -> int:
    return len(render_steps(steps, RenderBudget(max_step_chars=limit, max_total_chars=NO_CAP)).text)


def _limit_used(steps: list[Step], text: str, max_limit: int) -> int:
    """The per-step limit that, with no total cap, renders exactly ``text``."""
    matches = [
        k
        for k in range(max_limit + 1)
        if render_steps(steps, RenderBudget(max_step_chars=k, max_total_chars=NO_CAP)).text == text
    ]
    assert matches, "the rendered text is not the uncapped rendering at any single per-step limit"
    return matches[0]


# --- cut_middle -------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [10, 11, 4000])
def test_cut_middle_leaves_text_that_fits_unchanged(limit: int) -> None:
    """Text no longer than the limit is returned as is, with no marker."""
    assert cut_middle("abcdefghij", limit) == "abcdefghij"


def test_cut_middle_empty_text_with_zero_limit_is_unchanged() -> None:
    """An empty content fits any limit, including 0."""
    assert cut_middle("", 0) == ""


ALPHABET = "abcdefghijklmnopqrstuvwxyz" * 4  # 104 characters


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (5, "abc[... 99 characters cut ...]yz"),  # head ceil(5/2)=3, tail floor(5/2)=2, 104-5 cut
        (4, "ab[... 100 characters cut ...]yz"),  # head 2, tail 2
        (1, "a[... 103 characters cut ...]"),  # head 1, no tail
        (0, "[... 104 characters cut ...]"),  # marker only
        (60, ALPHABET[:30] + "[... 44 characters cut ...]" + ALPHABET[-30:]),  # 30 + 27 + 30 = 87 < 104
    ],
)
def test_cut_middle_keeps_head_and_tail_and_counts_the_cut(limit: int, expected: str) -> None:
    """A cut keeps ceil(limit/2) head and floor(limit/2) tail characters; the marker counts the rest."""
    assert cut_middle(ALPHABET, limit) == expected


@pytest.mark.parametrize("limit", [0, 5, 9])
def test_cut_middle_never_lengthens_a_short_text(limit: int) -> None:
    """A text no longer than limit + marker is kept whole: "abcdefghij" cut at 5 would be
    "abc[... 5 characters cut ...]ij" (31 characters > 10), so it stays as it is."""
    assert cut_middle("abcdefghij", limit) == "abcdefghij"


def test_cut_middle_cuts_only_when_it_saves_characters() -> None:
    """At limit 0, a 27-character text would become the 27-character marker: kept whole; a
    28-character text becomes the 27-character "[... 28 characters cut ...]"."""
    assert cut_middle("x" * 27, 0) == "x" * 27
    assert cut_middle("x" * 28, 0) == "[... 28 characters cut ...]"


def test_cut_marker_constant_matches_cut_middle() -> None:
    """The marker text is the module's CUT_MARKER, so callers can search for it."""
    assert cut_middle("x" * 30, 0) == CUT_MARKER.format(n=30)


# --- step_header --------------------------------------------------------------------------------


def test_step_header_with_recipient() -> None:
    """A message to another agent shows ``sender -> recipient`` and its kind."""
    step = Step(index=2, agent="Orchestrator", kind="agent", recipient="WebSurfer", content="go")
    assert step_header(step) == "[step 2] Orchestrator -> WebSurfer (agent)"


def test_step_header_with_tool_calls() -> None:
    """Tool calls are listed after the kind, in order."""
    step = Step(index=3, agent="WebSurfer", kind="tool_call", tool_calls=["search", "click"])
    assert step_header(step) == "[step 3] WebSurfer (tool_call; tools: search, click)"


@pytest.mark.parametrize("kind", ["tool_result", "human", "agent"])
def test_step_header_shows_kind(kind: str) -> None:
    """With no recipient and no tools the header is ``[step i] agent (kind)``."""
    step = Step(index=0, agent="user", kind=kind)
    assert step_header(step) == f"[step 0] user ({kind})"


def test_step_header_system_speaker() -> None:
    """Framework messages are labelled with the reserved system speaker."""
    step = Step(index=7, agent=SYSTEM_SPEAKER, kind="system", content="round 2")
    assert step_header(step) == "[step 7] system (system)"


# --- render_log / render_steps -------------------------------------------------------------------


def test_render_log_without_cut() -> None:
    """Within budget, the log is every header and full content, steps separated by a blank line;
    an empty content leaves the header alone."""
    steps = [
        Step(index=0, agent="user", kind="human", content="Find the price."),
        Step(index=1, agent="Orchestrator", kind="agent", recipient="WebSurfer", content="Search it."),
        Step(index=2, agent="WebSurfer", kind="tool_call", tool_calls=["search"]),
    ]
    rendered = render_log(_trajectory(steps))
    assert rendered.text == (
        "[step 0] user (human)\nFind the price.\n\n"
        "[step 1] Orchestrator -> WebSurfer (agent)\nSearch it.\n\n"
        "[step 2] WebSurfer (tool_call; tools: search)\n\n[end of log]"
    )
    assert rendered.truncated_steps == []
    assert rendered.over_budget is False


def test_render_steps_subset_keeps_original_indices() -> None:
    """A subset of a log keeps each step's own 0-based index in its header."""
    steps = _steps("a", "b", "c", "d")
    text = render_steps(steps[2:]).text
    assert text.startswith("[step 2] coder (agent)\nc")
    assert "[step 0]" not in text and "[step 3]" in text


def test_per_step_cut_lists_exactly_the_cut_steps() -> None:
    """Only steps that a cut makes shorter are cut, each gets one marker, and each is listed."""
    steps = _steps("x" * 10, "y" * 80, "z" * 3, "w" * 45, "v" * 20)
    rendered = render_steps(steps, RenderBudget(max_step_chars=20, max_total_chars=NO_CAP))
    # step 1: 20 kept + "[... 60 characters cut ...]" (27) = 47 < 80 -> cut
    # step 3: 20 kept + "[... 25 characters cut ...]" (27) = 47 > 45 -> kept whole
    assert rendered.truncated_steps == [1]
    assert rendered.text.count("characters cut ...]") == 1
    assert "[... 60 characters cut ...]" in rendered.text
    assert "w" * 45 in rendered.text
    assert "x" * 10 in rendered.text and "v" * 20 in rendered.text
    assert rendered.over_budget is False


def test_total_budget_bisection_finds_largest_fitting_limit() -> None:
    """When the log is over max_total_chars, the same per-step limit is lowered for every step to
    the largest value that fits: the text fits, and that limit + 1 would not."""
    steps = _steps("a" * 300, "b" * 500, "c" * 800, "d" * 1200)
    budget = RenderBudget(max_step_chars=250, max_total_chars=700)
    rendered = render_steps(steps, budget)
    limit = _limit_used(steps, rendered.text, budget.max_step_chars)
    assert len(rendered.text) <= budget.max_total_chars
    assert _length(steps, limit + 1) > budget.max_total_chars
    # All contents exceed every candidate limit, so length grows with the limit: brute force agrees.
    assert limit == max(k for k in range(budget.max_step_chars + 1) if _length(steps, k) <= budget.max_total_chars)
    assert rendered.truncated_steps == [0, 1, 2, 3]
    assert rendered.over_budget is False


def test_total_budget_limit_is_largest_even_when_a_step_fits_whole() -> None:
    """The chosen per-step limit is the largest that fits even when some step is shorter than it
    (a step that fits whole at the largest limit must not be cut)."""
    steps = _steps("a" * 100, "b" * 2000)
    budget = RenderBudget(max_step_chars=4000, max_total_chars=_length(steps, 100))
    rendered = render_steps(steps, budget)
    best = max(k for k in range(301) if _length(steps, k) <= budget.max_total_chars)
    assert best == 100
    assert _limit_used(steps, rendered.text, 300) == best
    assert rendered.truncated_steps == [1]


def test_every_header_survives_cutting() -> None:
    """Headers are never cut: every step number and speaker stays visible under a tight budget."""
    steps = [
        Step(index=i, agent=a, kind="agent", recipient=r, content=str(i) * (200 + 37 * i))
        for i, (a, r) in enumerate([("Orchestrator", "WebSurfer"), ("WebSurfer", None), ("coder", "Orchestrator")] * 3)
    ]
    rendered = render_steps(steps, RenderBudget(max_step_chars=4000, max_total_chars=1000))
    assert len(rendered.text) <= 1000
    assert rendered.over_budget is False
    positions = [rendered.text.index(step_header(step)) for step in steps]
    assert positions == sorted(positions)


def test_headers_alone_over_budget() -> None:
    """If even the headers do not fit, the log is over budget, says so, and leaves steps out
    (tests/blame/test_render_budget.py has the details) instead of exceeding the budget."""
    steps = _steps("a" * 100, "b" * 100, "c" * 100)
    rendered = render_steps(steps, RenderBudget(max_step_chars=4000, max_total_chars=150))
    assert rendered.over_budget is True
    assert len(rendered.text) <= 150
    assert rendered.omitted_steps == [1, 2]
    assert step_header(steps[0]) in rendered.text


def test_cutting_never_lengthens_the_log() -> None:
    """Cutting to meet the budget never returns a text longer than the uncut log, and no step is
    reported cut when cutting it would not save characters."""
    steps = _steps("ok", "ok", "ok")
    uncut = _length(steps, 4000)
    rendered = render_steps(steps, RenderBudget(max_total_chars=uncut - 1))
    assert len(rendered.text) <= uncut
    assert rendered.truncated_steps == []


def test_over_budget_flag_matches_omission() -> None:
    """``over_budget`` is True exactly when steps were left out, and the text then still keeps the
    budget (down to the shortest possible text: one omission marker and the end-of-log marker)."""
    steps = _steps("a" * 400, "b" * 900, "")
    shortest = len("[... steps 0-2 omitted: 3 steps not shown ...]\n\n[end of log]")
    for total in (0, 30, 60, 90, 150, 400, 1000, 5000):
        rendered = render_steps(steps, RenderBudget(max_total_chars=total))
        assert rendered.over_budget == bool(rendered.omitted_steps), total
        assert len(rendered.text) <= max(total, shortest), total


# --- render_system -------------------------------------------------------------------------------


def test_render_system_lists_components_in_order_with_kind() -> None:
    """Components appear in hazard-vector order, numbered from 0, with their kind (and name when it
    differs from the id)."""
    text = render_system(_system(), prompts=False)
    expected = [
        "  0. Orchestrator [agent]: plans",
        "  1. WebSurfer [agent]",
        "  2. coder (Code Writer) [agent]",
        "  3. search_api (Search API) [software]: web search",
        "  4. user (User) [human]",
    ]
    lines = text.splitlines()
    assert lines[:2] == ["System: toy", "Components (hazard dimensions, in order):"]
    assert lines[2:] == expected
    assert "System prompt" not in text


def test_render_system_cuts_prompts_to_max_prompt_chars() -> None:
    """System prompts are shown per agent, cut to max_prompt_chars with the same head/tail rule."""
    text = render_system(_system(), RenderBudget(max_prompt_chars=10))
    assert "System prompt of Orchestrator:\nppppp[... 90 characters cut ...]qqqqq" in text
    assert "System prompt of WebSurfer:\nbrowse" in text
    assert "System prompt of coder" not in text
    assert text.index("System prompt of Orchestrator") < text.index("System prompt of WebSurfer")


# --- render_task and the no-leak invariant ------------------------------------------------------


def test_render_task_shows_reference_answer_only_when_carried() -> None:
    """The reference answer is rendered only if the trajectory still carries it."""
    trajectory = _trajectory(reference_answer="42")
    assert "Reference answer" in render_task(trajectory) and "42" in render_task(trajectory)
    shown = render_task(trajectory.model_view(with_reference_answer=True))
    assert "Reference answer to the task (shown by task option): 42" in shown


def test_model_view_drops_reference_answer_and_label_by_default() -> None:
    """No leak: the default model view carries no label and no reference answer, so the rendered
    task and log cannot reveal them."""
    trajectory = _trajectory(reference_answer="42")
    view = trajectory.model_view()
    assert view.label is None
    assert view.reference_answer is None
    assert trajectory.label is not None and trajectory.reference_answer == "42"  # original untouched
    text = render_task(view)
    assert text == "Task given to the system:\nWhat is six times seven?"
    assert "42" not in text + render_log(view).text


def test_render_task_without_task_text() -> None:
    """A missing task is shown as not recorded rather than as an empty string."""
    trajectory = _trajectory(reference_answer=None).model_copy(update={"task": ""})
    assert render_task(trajectory) == "Task given to the system:\n(not recorded)"


# --- RenderBudget ---------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["max_step_chars", "max_total_chars", "max_prompt_chars"])
def test_render_budget_rejects_negative(field: str) -> None:
    """A negative budget is a configuration error, raised when the budget is built."""
    with pytest.raises(ValueError):
        RenderBudget(**{field: -1})


def test_render_budget_accepts_zero() -> None:
    """Zero is a legal (if harsh) budget."""
    assert RenderBudget(0, 0, 0).max_total_chars == 0
