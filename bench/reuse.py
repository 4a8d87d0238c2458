"""Prefix reuse within a sample: how much of each call's prompt repeats a prefix already sent
(``bench.measure``'s docstring, measurement 4), the bound no layout can beat, and checks of the
solvers' documented prompt layouts."""

from __future__ import annotations

import bisect
import itertools
import json
from typing import Any

from inspect_ai.event import ModelEvent

from bench.configs import BUDGET, TASKS
from blame.render import END_OF_LOG, PrefixLogs, render_steps
from blame.state import trajectory_from_metadata
from solvers.online_auditor import audit_header, audit_messages, auto_stride, prefix_schedule
from solvers.poirot import persona_steps

LOG_END = f"\n\n{END_OF_LOG}"
"""Where a rendered log ends (``blame.render.join_blocks``): its last occurrence in an auditor
prompt (the log escapes forged markers) is the end of the prefix's log."""


def rendered_call_messages(messages: list[Any]) -> str:
    return "".join(f"<|{m.role}|>\n{m.text}\n" for m in messages)


def rendered_call(event: ModelEvent, schema_first: bool = False) -> str:
    """The text a server sees for one call: role + content per message, in order (optionally the
    response schema's JSON first)."""
    text = rendered_call_messages(event.input)
    schema = event.config.response_schema
    if schema_first and schema is not None:
        text = json.dumps(schema.json_schema.model_dump(exclude_none=True), sort_keys=True) + "\n" + text
    return text


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over slice equality: C-speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixSet:
    """Strings seen so far; ``best(x)`` is the longest common prefix of x with any of them (the
    maximum is reached by x's neighbours in sorted order)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        bisect.insort(self.items, text)

    def best(self, text: str) -> int:
        i = bisect.bisect_left(self.items, text)
        return max(
            (common_prefix(text, self.items[j]) for j in (i - 1, i) if 0 <= j < len(self.items)),
            default=0,
        )


def prefix_reuse(events: list[ModelEvent], schema_first: bool = False, done_before: bool = False) -> tuple[int, int]:
    """(reused characters, total characters) over one sample's calls (``bench.measure``'s
    docstring, 4)."""
    texts = [rendered_call(e, schema_first) for e in events]
    seen, reused = PrefixSet(), 0
    finished = sorted(range(len(events)), key=lambda i: events[i].completed or events[i].timestamp)
    added = 0
    for i, e in enumerate(events):  # events are in start order
        if done_before:
            while added < len(finished) and (events[finished[added]].completed or e.timestamp) <= e.timestamp:
                seen.add(texts[finished[added]])
                added += 1
        reused += seen.best(texts[i])
        if not done_before:
            seen.add(texts[i])
    return reused, sum(map(len, texts))


def unavoidable_chars(config: str, events: list[ModelEvent]) -> int:
    """Characters of a sample's prompts that no layout could have sent in an earlier call of the
    sample (``bench.measure``'s docstring, 4: the bound). Every method: the first call. POIROT:
    also each further persona's own turn (its identity and, under ``own``, its private view of the
    log), less the longest prefix it shares with an earlier persona's turn. Auditor: also, per
    call, the log it adds to the previous (shorter) prefix."""
    texts = [rendered_call(e) for e in events]
    if not texts:
        return 0
    if config.startswith("auditor"):
        ordered = sorted(texts, key=len)
        ends = [t.rindex(LOG_END) for t in ordered]
        return len(ordered[0]) + sum(b - a for a, b in itertools.pairwise(ends))
    unavoidable = len(texts[0])
    if config.startswith("poirot"):
        turns = list(dict.fromkeys(e.input[1].text for e in events if len(e.input) > 2))
        seen = PrefixSet()
        first_turn = events[0].input[1].text if len(events[0].input) > 2 else None
        for turn in turns:
            if turn != first_turn:
                unavoidable += len(turn) - seen.best(turn)
            seen.add(turn)
    return unavoidable


def persona_view_sharing(task_name: str) -> float:
    """Under ``persona_view="own"``: the share of the personas' rendered views that another
    persona's view of the same sample already starts with (the most a layout that put the view
    before the persona's identity could add to cross-persona reuse)."""
    shared = total = 0
    for sample in TASKS[task_name]().dataset:
        t = trajectory_from_metadata(sample.metadata)
        seen = PrefixSet()
        for agent in t.system.agents:
            view = render_steps(persona_steps(t, agent.id, "own"), BUDGET).text
            shared, total = shared + seen.best(view), total + len(view)
            seen.add(view)
    return shared / total if total else float("nan")


def walk_reuse(task_name: str) -> dict[str, tuple[float, float]]:
    """The sequential auditor's prefix reuse over every sample of the task, from the prompts alone
    (a walk's prompts do not depend on the answers, only on where it stops), for two stopping
    points: at the labelled decisive step (a perfect auditor; step-labelled data only) and at the
    end (no alarm). Values: (share reused, mean calls per sample)."""
    totals: dict[str, list[float]] = {}
    for sample in TASKS[task_name]().dataset:
        t = trajectory_from_metadata(sample.metadata)
        view = t.model_view()
        prefixes = PrefixLogs(view, BUDGET)
        header = audit_header(view, BUDGET)
        schedule = prefix_schedule(len(view.steps), auto_stride(len(view.steps)))
        texts = [rendered_call_messages(audit_messages(header, prefixes.upto(k).text, k)) for k in schedule]
        stops = {"full walk": len(texts)}
        if t.label is not None and t.label.step is not None:
            stops["labelled step"] = t.label.step + 1
        for name, calls in stops.items():
            seen, reused = PrefixSet(), 0
            for text in texts[:calls]:
                reused += seen.best(text)
                seen.add(text)
            acc = totals.setdefault(name, [0, 0, 0, 0])
            acc[0] += reused
            acc[1] += sum(map(len, texts[:calls]))
            acc[2] += calls
            acc[3] += 1
    return {name: (r / total, calls / n) for name, (r, total, calls, n) in totals.items()}


def layout_check(config: str, events: list[ModelEvent]) -> tuple[int, int]:
    """(calls that reuse what the documented layout promises, calls checked) for one sample.

    Auditor: each prompt (in prefix order) shares with the next one everything before its
    end-of-log marker (the next prompt's log goes on where this one's ends; then come the marker
    and the closing question). POIROT: every call after a persona's first
    reuses the shared context and that persona's whole turn (an earlier call of the same
    persona starts with them).
    """
    texts = [rendered_call(e) for e in events]
    if config.startswith("auditor"):
        ordered = sorted(texts, key=len)
        pairs = list(itertools.pairwise(ordered))
        return sum(common_prefix(a, b) >= a.rindex(LOG_END) for a, b in pairs), len(pairs)
    if config.startswith("poirot"):
        first_seen: set[str] = set()
        ok = checked = 0
        for i, (event, text) in enumerate(zip(events, texts)):
            persona = event.input[1].text if len(event.input) > 2 else ""
            if persona in first_seen:
                head = len(rendered_call_messages(event.input[:2]))
                checked += 1
                ok += any(common_prefix(text, earlier) >= head for earlier in texts[:i])
            first_seen.add(persona)
        return ok, checked
    return 0, 0
