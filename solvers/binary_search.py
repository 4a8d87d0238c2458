"""Binary search: ask which half of the current range holds the decisive error, and recurse.

The full specification, and how it departs from the paper and its code:
``docs/protocols/step_search.md``.

Who&When's third baseline (Zhang et al., ICML 2025, arXiv 2505.00212; original code
``Automated_FA/Lib/utils.py``). The search runs over the m searchable steps ``c[0..m-1]``
(``solvers.step_by_step.searchable_steps``: every step produced by a component, i.e. all n steps
on Who&When) and keeps a range ``[start, end]`` of positions in that list, at first ``[0, m-1]``.

Halving rule (the original's): ``mid = start + (end - start) // 2``; the **first half** is
``start..mid``, the **second half** ``mid+1..end`` (the original calls them the "upper" and
"lower" halves). The first half is the larger one when the range has an odd length. One call per
round shows the task, the system and the steps ``c[start]..c[end]`` of the log with their real
numbers (only that segment, as in the original), names both halves by step numbers and asks
``{"reason", "half": "first" | "second"}``. The search ends when ``start == end``; the prediction
is step ``c[start]`` and the component that produced it (``attribute_step``), also on
vector-labelled data, where this method therefore names exactly one faulty component.

Ambiguous-answer rule (deterministic, not random): an answer that does not name exactly one
half (malformed JSON, an unknown value, free text naming both or neither, an empty answer, a
context overflow) is **ambiguous** and resolved to the **first half** (``start..mid``), the
original's rule for local models (its API runs drew a random half). Every round is recorded in
the store under ``binary_search_rounds`` with ``ambiguous`` and the reason. If every answer of
a search was ambiguous the result is the rule's, not the model's, and the Attribution is
invalid; one usable answer or more keeps it valid.

Unknown outcome (a task with safe controls; ``solvers._framing``). Halving presumes an error
exists, so the search first asks the natural question on the whole log (phase ``gate``, store
key ``binary_search_gate``): "does it contain a decisive error?" (``{"reason", "decisive_error"}``).
"No" is the valid "no fault" answer (no agent, no step) and ends the search; "yes" starts the
halving, whose question then supposes one ("suppose it contains one: it lies within ..."); an
unusable answer also starts it (recorded; with m = 1, nothing else is asked and the Attribution
is invalid).

Calls per sample: the number of rounds, between floor(log2 m) and ceil(log2 m) (0 when m = 1);
plus 1 under unknown outcome (only that 1 when the answer is "no").

Departures from the original code: step numbers in the segment and in the question (the original
showed the segment without them and described the range only in words); the reference answer only
when the task asks for it (the original always showed it); the first half on ambiguity instead
of a random half; JSON answers.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, refuse_unknown
from blame.render import RenderBudget, RenderedLog, note_cuts
from blame.schema import Attribution, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._framing import situation, told_failed
from solvers._output import bound_text, extract_json_object, output_problem
from solvers.all_at_once import system_prompt
from solvers.step_by_step import (
    DECISIVE,
    attribute_step,
    context_prompt,
    decisive_schema,
    parse_yes_no,
    searchable_steps,
)

GATE_KEY = "binary_search_gate"
"""Store key: the answer to the first question under unknown outcome (decisive, reason, errors)."""
ROUNDS_KEY = "binary_search_rounds"
"""Store key: one dict per round (start/end/mid as step numbers, half, ambiguous, reason, errors)."""

HALVES = ("first", "second")

QUESTION = """\
{situation} {premise} within steps {lo} to {hi}, shown above. Which part of this segment holds it?
- "first": steps {lo} to {mid}
- "second": steps {after} to {hi}

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "half": "first" or "second"}}"""

_VECTOR_FAULT = ("(the first step at which a faulty component acted, reasoned or reported wrongly in a way "
                 "that led to the hazard event)")
PREMISE = {
    ("step", True): "Its decisive error (the earliest mistake that led to the failure) lies",
    ("step", False): "Suppose it contains one (the earliest mistake that led to a failure): it lies",
    ("vector", True): f"The decisive fault {_VECTOR_FAULT} lies",
    ("vector", False): f"Suppose it contains one: its decisive fault {_VECTOR_FAULT} lies",
}
"""What the halving question supposes, after the framing sentence (``solvers._framing``)."""

GATE_QUESTION = """\
{situation} Does its log (above) contain a decisive error: a mistake by an agent or component \
that led, or will lead, to a failure?

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "decisive_error": <true or false>}}"""

_WORDS = {"first": re.compile(r"\b(first|upper)\b", re.IGNORECASE), "second": re.compile(r"\b(second|lower)\b", re.IGNORECASE)}


def halve(start: int, end: int) -> tuple[int, tuple[int, int], tuple[int, int]]:
    """(mid, first half, second half) of the position range ``start..end`` (``start < end``)."""
    mid = start + (end - start) // 2
    return mid, (start, mid), (mid + 1, end)


def half_schema() -> dict[str, Any]:
    """JSON schema of a binary-search answer."""
    return {
        "type": "object",
        "properties": {"reason": {"type": "string"}, "half": {"type": "string", "enum": list(HALVES)}},
        "required": ["reason", "half"],
        "additionalProperties": False,
    }


def parse_half(text: str) -> tuple[str | None, str, list[str]]:
    """(half, reason, errors): ``"first"``/``"second"`` or None when the answer is ambiguous.

    JSON ``half`` may also be ``"upper"``/``"lower"`` (the original's words) or ``1``/``2``;
    free text counts only if it names exactly one half.
    """
    data = extract_json_object(text, "half")
    if data is not None:
        reason, value = str(data.get("reason") or ""), data.get("half")
        aliases = {"first": "first", "upper": "first", "1": "first", "second": "second", "lower": "second", "2": "second"}
        key = str(value).strip().lower() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if key in aliases:
            return aliases[key], reason, []
        return None, reason, [f"'half' is {value!r}, not 'first' or 'second'"]
    named = [half for half, pattern in _WORDS.items() if pattern.search(text)]
    if len(named) == 1:
        return named[0], bound_text(text).strip(), []
    return None, "", ["the answer names neither half or both" if text.strip() else "empty answer"]


def segment_prompt(trajectory: Trajectory, lo: int, hi: int, mid: int, after: int, budget: RenderBudget) -> tuple[str, RenderedLog]:
    """The user turn for the step range ``lo..hi`` (step numbers) split after step ``mid``."""
    question = QUESTION.format(situation=situation(trajectory), premise=PREMISE[trajectory.label_kind, told_failed(trajectory)],
                               lo=lo, hi=hi, mid=mid, after=after)
    return context_prompt(
        trajectory,
        trajectory.steps[lo : hi + 1],
        budget,
        f"Segment of the session log: steps {lo} to {hi} (the whole log has steps 0 to {len(trajectory.steps) - 1}):",
        question,
    )


@solver
def binary_search(
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """Halve the searchable steps until one is left (about log2 n calls per sample).

    Args:
        structured_output: send the answer's JSON schema as the response format.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for each shown segment, in characters.
        max_prompt_chars: budget per agent system prompt shown to the judge.
    """
    refuse_unknown(binary_search, kwargs)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="binary_search")
        model = get_model(role="judge")
        schema = response_schema("half", half_schema()) if structured_output else None
        steps = searchable_steps(trajectory)
        rounds: list[dict[str, Any]] = []
        start, end = 0, len(steps) - 1
        gate = None
        if not told_failed(trajectory) and steps:
            async with span("gate"):
                gate, messages, output = await _ask_gate(model, trajectory, budget, attribution, structured_output)
            state.messages, state.output = [*messages, output.message], output
            state.store.set(GATE_KEY, gate)
        async with span("binary_search"):
            while start < end and (gate is None or gate["decisive"] is not False):
                _, (a, b), (c, d) = halve(start, end)
                lo, hi = steps[a], steps[d]
                async with span(f"round_{len(rounds) + 1}"):
                    prompt, log = segment_prompt(trajectory, lo, hi, steps[b], steps[c], budget)
                    note_cuts(attribution, log)
                    messages: list[ChatMessage] = [ChatMessageSystem(content=system_prompt(trajectory)), ChatMessageUser(content=prompt)]
                    output = await generate_answer(model, messages, attribution, phase="search", schema=schema)
                state.messages, state.output = [*messages, output.message], output
                problem = output_problem(output)
                half, reason, errors = (None, "", [problem]) if problem else parse_half(output.completion)
                chosen = half or "first"
                rounds.append(
                    {
                        "range": [lo, hi],
                        "first": [steps[a], steps[b]],
                        "second": [steps[c], steps[d]],
                        "answer": half,
                        "chosen": chosen,
                        "ambiguous": half is None,
                        "reason": reason,
                        "errors": errors,
                    }
                )
                start, end = (a, b) if chosen == "first" else (c, d)
        state.store.set(ROUNDS_KEY, rounds)
        gate_unusable = gate is not None and gate["decisive"] is None
        if not steps:
            attribution.invalid("the log has no step produced by a component")
        elif gate is not None and gate["decisive"] is False:
            attribution.reason = gate["reason"] or "no decisive error"
        elif gate_unusable and not rounds:
            attribution.invalid("the first question's answer was unusable: " + "; ".join(gate["errors"]))
        elif rounds and all(r["ambiguous"] for r in rounds):
            attribution.invalid(
                f"all {len(rounds)} answers were ambiguous, so the result is the first-half rule's, not the model's: "
                + "; ".join(r["errors"][0] for r in rounds if r["errors"])
            )
        else:
            attribution.reason = next((r["reason"] for r in reversed(rounds) if not r["ambiguous"]), "")
            attribute_step(attribution, trajectory, steps[start])
        save_attribution(state, attribution)
        return state

    return solve


async def _ask_gate(
    model: Any, trajectory: Trajectory, budget: RenderBudget, attribution: Attribution, structured_output: bool
) -> tuple[dict[str, Any], list[ChatMessage], Any]:
    """The first question under unknown outcome: does the whole log contain a decisive error?"""
    prompt, log = context_prompt(
        trajectory, trajectory.steps, budget, "Session log (steps numbered from 0):",
        GATE_QUESTION.format(situation=situation(trajectory)),
    )
    note_cuts(attribution, log)
    messages: list[ChatMessage] = [ChatMessageSystem(content=system_prompt(trajectory)), ChatMessageUser(content=prompt)]
    schema = response_schema("decisive", decisive_schema()) if structured_output else None
    output = await generate_answer(model, messages, attribution, phase="gate", schema=schema)
    problem = output_problem(output)
    decisive, reason, errors = (None, "", [problem]) if problem else parse_yes_no(output.completion, DECISIVE)
    return {"decisive": decisive, "reason": reason, "errors": errors}, messages, output
