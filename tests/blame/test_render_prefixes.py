"""Prefixes of one log (blame/render.py, "Prefixes"; ``PrefixLogs``): each step rendered once,
every prefix within the budget, consecutive prefixes sharing a long common prefix, and every cut
reported."""

from __future__ import annotations

import os
import random
import re

import pytest

import blame.render as render
from blame.render import (
    END_OF_LOG,
    PrefixLogs,
    RenderBudget,
    RenderedLog,
    join_blocks,
    note_cuts,
    render_prefix_blocks,
    render_steps,
)
from blame.schema import Component, Step, SystemSpec, Trajectory

HEADER = re.compile(r"^\[step (\d+)\] ", re.MULTILINE)
MARKER = re.compile(r"^\[\.\.\. steps? (\d+)(?:-(\d+))? omitted: (\d+) steps? not shown \.\.\.\]$", re.MULTILINE)
END = f"\n\n{END_OF_LOG}"


def _trajectory(contents: list[str], agent: str = "a") -> Trajectory:
    system = SystemSpec(name="s", components=[Component(id=name, name=name, kind="agent") for name in (agent, "b")])
    steps = [Step(index=i, agent=(agent, "b")[i % 2], kind="agent", content=c) for i, c in enumerate(contents)]
    return Trajectory(id="t", source="unit", label_kind="step", system=system, steps=steps)


def _block(i: int) -> str:
    return f"[step {i}] {'ab'[i % 2]} (agent)\nm{i}"


def test_twelve_steps_hand_computed() -> None:
    """12 steps "m0".."m11" under max_total_chars=150, so 136 characters of log before the
    end-of-log marker. Blocks: 21 characters (steps 0-9) and 23 (10, 11); the whole log is 258
    even with no content, so it is over budget. Prefixes 0-5 fit (5: 6 x 21 + 5 x 2 = 136): they
    are exactly the from-scratch rendering. Head: half of (136 - 49, the widest marker, - 4) is 41,
    which holds step 0 (21) but not steps 0-1 (44). Tail room: half of (136 - 23 - 49 - 2) is 31:
    one block. Prefix 6 (159 whole) moves the window to step 6 (23 + 46 + 2 + 21 = 92); prefix 7
    extends it (115); prefix 8 would be 138 > 136, so the window moves to step 8; and so on."""
    trajectory = _trajectory([f"m{i}" for i in range(12)])
    budget = RenderBudget(max_total_chars=150)
    prefixes = PrefixLogs(trajectory, budget)
    assert prefixes.over_budget
    for k in range(6):
        assert prefixes.upto(k) == render_steps(trajectory.steps[: k + 1], budget)
        assert prefixes.upto(k).text == "\n\n".join(_block(i) for i in range(k + 1)) + END
    line = "[... steps 1-{last} omitted: {n} steps not shown ...]"
    expected = {
        6: [_block(0), line.format(last=5, n=5), _block(6)],
        7: [_block(0), line.format(last=5, n=5), _block(6), _block(7)],
        8: [_block(0), line.format(last=7, n=7), _block(8)],
        9: [_block(0), line.format(last=7, n=7), _block(8), _block(9)],
        10: [_block(0), line.format(last=9, n=9), _block(10)],
        11: [_block(0), line.format(last=9, n=9), _block(10), _block(11)],
    }
    for k, pieces in expected.items():
        log = prefixes.upto(k)
        last = 5 if k < 8 else 7 if k < 10 else 9
        assert log == RenderedLog("\n\n".join(pieces) + END, [], over_budget=True, omitted_steps=list(range(1, last + 1)))
        assert len(log.text) <= 150
    assert [len(prefixes.upto(k).text) - len(END) for k in (6, 7)] == [92, 115]


def test_within_budget_prefixes_are_the_joined_blocks_as_before() -> None:
    """A log that fits at a lower per-step limit: prefix k is join_blocks of the first k + 1
    blocks of render_prefix_blocks, byte for byte, with the cut steps of those blocks."""
    trajectory = _trajectory(["x" * 500, "short", "y" * 900, "z" * 40])
    budget = RenderBudget(max_step_chars=400, max_total_chars=700)
    blocks, truncated = render_prefix_blocks(trajectory, budget)
    prefixes = PrefixLogs(trajectory, budget)
    assert not prefixes.over_budget and truncated == [0, 2]
    for k in range(4):
        assert prefixes.upto(k) == RenderedLog(join_blocks(blocks[: k + 1]), [i for i in truncated if i <= k])


def _walk(trajectory: Trajectory, budget: RenderBudget) -> list[RenderedLog]:
    prefixes = PrefixLogs(trajectory, budget)
    return [prefixes.upto(k) for k in range(len(trajectory.steps))]


def _shared(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def test_a_long_log_keeps_the_budget_and_consecutive_prefixes_share_the_head_or_more() -> None:
    """300 steps of about 27 characters under a 3,000-character budget: every prefix is within
    it and shows step 0 and its own last step; each prompt either extends the previous one (the
    previous log without its end-of-log marker is a string prefix of it) or, at a move of the
    window, shares at least the head, about half the budget; moves are rare."""
    trajectory = _trajectory([f"Turn {i}: source {i % 7}." for i in range(300)])
    logs = _walk(trajectory, RenderBudget(max_total_chars=3_000))
    moves = 0
    for k, log in enumerate(logs):
        assert len(log.text) <= 3_000
        assert log.text.startswith("[step 0] a (agent)\nTurn 0: source 0.")
        assert log.text.endswith(f"[step {k}] {'ab'[k % 2]} (agent)\nTurn {k}: source {k % 7}.{END}")
        if k == 0:
            continue
        previous = logs[k - 1].text.removesuffix(END)
        if not log.text.startswith(previous):
            moves += 1
            assert _shared(previous, log.text) >= 1_300
    assert logs[-1].omitted_steps and 3 <= moves <= 12
    shared = sum(_shared(a.text, b.text) for a, b in zip(logs, logs[1:]))
    assert shared >= 0.95 * sum(len(b.text) for b in logs[1:]) - 14 * len(logs)


def test_a_prefix_depends_on_k_alone() -> None:
    """Asked in any order, from a fresh PrefixLogs or after a walk, prefix k is the same."""
    trajectory = _trajectory([f"Turn {i}." for i in range(200)])
    budget = RenderBudget(max_total_chars=1_500)
    walked = _walk(trajectory, budget)
    shuffled = list(range(200))
    random.Random(0).shuffle(shuffled)
    fresh = PrefixLogs(trajectory, budget)
    assert all(fresh.upto(k) == walked[k] for k in shuffled)
    assert all(PrefixLogs(trajectory, budget).upto(k) == walked[k] for k in (0, 57, 199))


@pytest.mark.parametrize(
    "contents, agent, budget",
    [
        ([f"Turn {i}." for i in range(300)], "a", RenderBudget(max_total_chars=2_000)),
        (["y" * 700] * 120, "a", RenderBudget(max_total_chars=4_000)),  # content cut to the floor
        (["hi"] * 60, "n" * 1_000, RenderBudget(max_total_chars=3_000)),  # headers cut
        (["w" * 50] * 40, "a", RenderBudget(max_total_chars=60)),  # below any step: the marker alone
    ],
    ids=["short steps", "long steps", "giant names", "tiny budget"],
)
def test_nothing_cut_goes_unreported(contents: list[str], agent: str, budget: RenderBudget) -> None:
    """For every prefix: the steps shown and the steps in the one omission line are 0..k exactly;
    omitted_steps is that line's run; truncated_steps is exactly the shown steps whose block was
    cut; over_budget is set where anything was left out or a header cut. A walk's note_cuts
    collects every step any prompt left out."""
    trajectory = _trajectory(contents, agent)
    collected = RenderedLog("")
    for k, log in enumerate(_walk(trajectory, budget)):
        note_cuts(collected, log)
        text = log.text.removesuffix(END)
        shown = [int(i) for i in HEADER.findall(text)]
        runs = [(int(a), int(b or a), int(n)) for a, b, n in MARKER.findall(text)]
        left_out = [i for a, b, _ in runs for i in range(a, b + 1)]
        assert len(runs) <= 1 and all(n == b - a + 1 for a, b, n in runs)
        assert sorted(shown + left_out) == list(range(k + 1)) and log.omitted_steps == left_out
        blocks = {int(HEADER.match(block)[1]): block for block in text.split("\n\n") if HEADER.match(block)}
        assert log.truncated_steps == [i for i in shown if "characters cut ...]" in blocks[i]]
        assert log.over_budget == bool(left_out or (agent != "a" and shown))
        if budget.max_total_chars >= 100:
            assert len(log.text) <= budget.max_total_chars and shown[-1] == k
    assert collected.omitted_steps and collected.over_budget == (collected.omitted_steps != [] or agent != "a")


def test_each_step_is_rendered_a_bounded_number_of_times(monkeypatch) -> None:
    """Walking all 3,000 prefixes of an over-budget log cuts each step a fixed number of times
    (the budget check, the header cut and the block), not once per prefix."""
    calls = 0
    cut_middle = render.cut_middle

    def counting(text: str, limit: int) -> str:
        nonlocal calls
        calls += 1
        return cut_middle(text, limit)

    monkeypatch.setattr(render, "cut_middle", counting)
    trajectory = _trajectory([f"step text {i}" for i in range(3_000)])
    _walk(trajectory, RenderBudget())
    assert calls <= 5 * 3_000
