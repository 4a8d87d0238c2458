"""Step-by-step: walk the log one step at a time and stop at the first step judged decisive.

The full specification, and how it departs from the paper and its code:
``docs/protocols/step_search.md``.

Who&When's second baseline (Zhang et al., "Which Agent Causes Task Failures and When?", ICML
2025, arXiv 2505.00212; original code ``Automated_FA/Lib/utils.py``). For each searchable step
``i`` in log order, one call shows the judge the task, the system and the log **up to and
including step i** (``[step j]`` headers, real 0-based numbers) and asks whether step ``i`` is the
decisive error, as ``{"reason", "decisive_error": true|false}``. The walk stops at the first
``true``; the prediction is that step and the component that produced it.

Which steps are searched, and what is attributed
------------------------------------------------
- Only steps produced by a component are asked about (:func:`searchable_steps`): a framework
  message (``Step.agent == SYSTEM_SPEAKER``, kind "system") is shown as context but is never a
  candidate, because no component produced it. Who&When logs have no such steps, so there every
  step is searched, as in the original.
- The prediction is the producer of the flagged step (:func:`attribute_step`): ``agent = step``
  ``= Step.agent`` and ``faulty = [Step.agent]``, whatever the component's kind (a
  ``Computer_terminal`` step gives ``Computer_terminal``, as the original's "speaker of that step").
  On vector-labelled data (BLAME) this is the one component the method can name.

Unusable and missing answers
----------------------------
- An answer that holds no usable true/false (malformed JSON, empty text, cut off) counts as
  "no" and the walk goes on, like the original (it stopped only on a reply starting "1. yes").
  Every answer, usable or not, is recorded in the store under ``step_by_step_verdicts``.
- A context overflow (``stop_reason=model_length``) ends the walk: later prefixes are longer.
- Nothing flagged: on step-labelled data of known failures the Attribution is invalid ("no step
  was judged decisive"); on vector-labelled data, and on step-labelled data under unknown outcome
  (``solvers._framing``; the question then says the session may or may not have failed), it is
  the legal "no fault" answer (``faulty=[]``, no agent, no step) **if every answer was a usable
  "no"**, and invalid otherwise (an unusable answer might have been the "yes").

Calls per sample: k, the 1-based position of the first flagged step among the m searchable
steps (m = n on Who&When); m when nothing is flagged; fewer if a context overflow ends the walk.
Input tokens grow with the prefix up to the render budget, so a full walk costs O(n^2) log
characters until the prefixes reach ``max_log_chars`` and O(n x max_log_chars) beyond; each step
is rendered once (``blame.render.PrefixLogs``), so the walk's CPU is linear in what it sends.

Prompt layout (prefix caching): each call is [system, user: task + system + log up to step i +
question]. The log is rendered step by step with the one per-step limit that fits the *whole*
log into the render budget (``blame.render.PrefixLogs``, as the online auditor does), and its
heading does not name i, so the prompt for step i equals the prompt for any later step up to the
end of step i: a prefix-caching server prefills only the new steps and the question. A log over
budget even at that limit 0 shows, once a prefix no longer fits, its first steps, one omission
line and a window of the steps up to i that moves on only in jumps (``blame.render``,
"Prefixes"), so consecutive prompts still extend each other between jumps and share the first
steps at a jump; the Attribution records what was left out (``omitted_steps``, ``over_budget``).

Departures from the original code, on purpose: real step numbers in every prompt (the original's
"(Step {idx})" sentence was not an f-string, so the literal ``{idx}`` reached the model); the
reference answer only when the task asks for it (the original always showed it); no "avoid being
overly critical" nudge; JSON answers checked against the log instead of ``1. Yes/No`` prefixes.

Shared helpers defined here and used by ``hybrid``, ``binary_search`` and ``floors``:
:func:`searchable_steps`, :func:`attribute_step`, :func:`parse_yes_no`, :func:`context_prompt`,
:func:`user_turn`, :func:`walk_steps`.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, refuse_unknown
from blame.render import (
    PrefixLogs,
    RenderBudget,
    RenderedLog,
    inline,
    note_cuts,
    render_steps,
    render_system,
    render_task,
)
from blame.schema import SYSTEM_SPEAKER, Attribution, Step, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._framing import admits_no_fault, mistake, situation, told_failed
from solvers._output import bound_text, extract_json_object, output_problem
from solvers.all_at_once import system_prompt

VERDICTS_KEY = "step_by_step_verdicts"
"""Store key: one dict per question asked (step, agent, decisive, reason, valid, errors)."""

DECISIVE = "decisive_error"

STEP_QUESTION = """\
{situation}{none} You are reading its log one step at a time: above are \
steps 0 to {i}, and later steps are not shown. Decide whether step {i}, produced by \
{agent}, is the decisive error: {mistake}, made at this step rather \
than inherited from an earlier step. Judge step {i} only.

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "decisive_error": <true or false>}}"""

NO_STEP = " If it does not, no step is one."
"""Follows the framing sentence under unknown outcome."""

VECTOR_STEP_QUESTION = """\
{situation}{none} You are reading its log one step at a time: above are steps 0 to {i}, and later \
steps are not shown. Decide whether step {i}, produced by {agent}, is the decisive fault: the first \
point at which {agent} acted, reasoned or reported wrongly in a way that led to a hazard event. \
Judge step {i} only.

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "decisive_error": <true or false>}}"""

_YES = {"yes", "true", "y"}
_NO = {"no", "false", "n"}
_LEADING = re.compile(r"^\W*(?:1\s*[.):]\s*)?\W*(yes|no|true|false)\b", re.IGNORECASE)


# --- shared helpers ---------------------------------------------------------------------------


def searchable_steps(trajectory: Trajectory) -> list[int]:
    """Indices of the steps a step search may name: every step produced by a component (all but
    framework messages of ``SYSTEM_SPEAKER``)."""
    return [s.index for s in trajectory.steps if s.agent != SYSTEM_SPEAKER and s.agent in trajectory.system.ids]


def attribute_step(attribution: Attribution, trajectory: Trajectory, index: int) -> Attribution:
    """Predict step ``index`` and the component that produced it (agent, faulty = [producer]).

    A framework message has no producing component: the Attribution is then invalid with the
    reason (searches never reach one; a fixed-step floor can).
    """
    step = trajectory.steps[index]
    attribution.step = index
    if step.agent in trajectory.system.ids:
        attribution.agent = step.agent
        attribution.faulty = [step.agent]
    else:
        attribution.invalid(f"step {index} is a framework message ({step.agent!r}); no component produced it")
    return attribution


def parse_yes_no(text: str, key: str) -> tuple[bool | None, str, list[str]]:
    """(answer, reason, errors) from ``{"reason": ..., key: true|false}``.

    Accepts a JSON boolean or the strings yes/no/true/false; without JSON, a reply that starts
    with yes/no/true/false (also the original Who&When "1. Yes" form). Anything else is
    ``None`` with the reason.
    """
    data = extract_json_object(text, key)
    if data is not None:
        reason = str(data.get("reason") or "")
        value = data.get(key)
        if isinstance(value, bool):
            return value, reason, []
        if isinstance(value, str) and value.strip().lower() in _YES | _NO:
            return value.strip().lower() in _YES, reason, []
        return None, reason, [f"'{key}' is {value!r}, not true or false"]
    match = _LEADING.match(text[:200])  # a leading word: the head suffices, and bounds the match
    if match:
        return match.group(1).lower() in _YES, bound_text(text).strip(), []
    return None, "", [f"no JSON object with '{key}' and no leading yes/no in the answer"]


def context_prompt(trajectory: Trajectory, steps: list[Step], budget: RenderBudget, heading: str, question: str) -> tuple[str, RenderedLog]:
    """One user turn: task, system, ``steps`` rendered under ``heading``, then ``question``;
    and the rendered log (what was cut to fit ``budget``)."""
    log = render_steps(steps, budget)
    return user_turn(trajectory, budget, f"{heading}\n{log.text}", question), log


def user_turn(trajectory: Trajectory, budget: RenderBudget, log_text: str, question: str) -> str:
    """Task, system, the rendered log (with its heading), then the question, as one user turn."""
    return "\n\n".join([render_task(trajectory, budget), render_system(trajectory.system, budget), log_text, question])


def decisive_schema() -> dict[str, Any]:
    """JSON schema of a yes/no answer about one step."""
    return {
        "type": "object",
        "properties": {"reason": {"type": "string"}, DECISIVE: {"type": "boolean"}},
        "required": ["reason", DECISIVE],
        "additionalProperties": False,
    }


class Walk:
    """What a step walk found: the flagged step (or None), every answer, and why it stopped.

    (A plain class, not a dataclass: ``--solver solvers/step_by_step.py@...`` loads this file
    outside ``sys.modules``, where ``@dataclass`` fails on postponed annotations.)
    """

    def __init__(self) -> None:
        self.flagged: int | None = None
        self.verdicts: list[dict[str, Any]] = []
        self.overflow: str | None = None
        self.cuts = RenderedLog("")  # what rendering the prefixes cut (blame.render.note_cuts)
        self.messages: list[ChatMessage] = []
        self.output: ModelOutput | None = None

    @property
    def unusable(self) -> int:
        return sum(1 for v in self.verdicts if not v["valid"])


async def walk_steps(
    model: Model,
    trajectory: Trajectory,
    indices: list[int],
    attribution: Attribution,
    budget: RenderBudget,
    structured_output: bool,
    phase: str = "step",
) -> Walk:
    """Ask about each step of ``indices`` in order (prefix 0..i shown) until one is judged decisive.

    An unusable answer counts as "no"; a context overflow stops the walk. Calls are booked on
    ``attribution`` under ``phase``.
    """
    walk = Walk()
    template = STEP_QUESTION if trajectory.label_kind == "step" else VECTOR_STEP_QUESTION
    template = template.replace("{situation}", situation(trajectory)).replace("{mistake}", mistake(trajectory))
    template = template.replace("{none}", "" if told_failed(trajectory) else NO_STEP)
    schema = response_schema("step_verdict", decisive_schema()) if structured_output else None
    prefixes = PrefixLogs(trajectory, budget)
    heading = f"Session log ({len(trajectory.steps)} steps in all, numbered from 0; shown up to the step in question):"
    for i in indices:
        step = trajectory.steps[i]
        async with span(f"step_{i}"):
            log = prefixes.upto(i)
            prompt = user_turn(trajectory, budget, f"{heading}\n{log.text}", template.format(i=i, agent=inline(step.agent)))
            note_cuts(walk.cuts, log)
            messages: list[ChatMessage] = [ChatMessageSystem(content=system_prompt(trajectory)), ChatMessageUser(content=prompt)]
            output = await generate_answer(model, messages, attribution, phase=phase, schema=schema)
        walk.messages, walk.output = messages, output
        problem = output_problem(output)
        if problem:
            decisive, reason, errors = None, "", [problem]
        else:
            decisive, reason, errors = parse_yes_no(output.completion, DECISIVE)
        walk.verdicts.append(
            {"step": i, "agent": step.agent, "decisive": decisive, "reason": reason, "valid": not errors, "errors": errors}
        )
        if output.stop_reason == "model_length":
            walk.overflow = f"step {i}: {problem}"
            break
        if decisive:
            walk.flagged = i
            break
    return walk


def keep_exchange(state: TaskState, walk: Walk) -> None:
    """Leave the last exchange of a walk as the sample's conversation and output."""
    if walk.output is not None:
        state.messages = [*walk.messages, walk.output.message]
        state.output = walk.output


# --- the solver -------------------------------------------------------------------------------


def conclude_walk(walk: Walk, trajectory: Trajectory, attribution: Attribution) -> Attribution:
    """The step-by-step verdict from a finished walk (see the module docstring for the rules)."""
    asked = len(walk.verdicts)
    note_cuts(attribution, walk.cuts)
    if walk.flagged is not None:
        attribution.reason = walk.verdicts[-1]["reason"]
        return attribute_step(attribution, trajectory, walk.flagged)
    if walk.overflow:
        return attribution.invalid(f"the walk stopped at a context overflow ({walk.overflow})")
    if asked == 0:
        return attribution.invalid("the log has no step produced by a component")
    if admits_no_fault(trajectory) and walk.unusable == 0:
        attribution.reason = f"none of the {asked} steps was judged a decisive fault"
        return attribution
    return attribution.invalid(
        f"no step was judged decisive ({asked} steps asked, {walk.unusable} answers unusable)"
    )


@solver
def step_by_step(
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """Walk the log and stop at the first step the judge calls decisive (at most one call per step).

    Args:
        structured_output: send the yes/no answer's JSON schema as the response format.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for each shown prefix of the log, in characters.
        max_prompt_chars: budget per agent system prompt shown to the judge.
    """
    refuse_unknown(step_by_step, kwargs)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="step_by_step")
        indices = searchable_steps(trajectory)
        async with span("step_by_step"):
            walk = await walk_steps(get_model(role="judge"), trajectory, indices, attribution, budget, structured_output)
        state.store.set(VERDICTS_KEY, walk.verdicts)
        keep_exchange(state, walk)
        conclude_walk(walk, trajectory, attribution)
        save_attribution(state, attribution)
        return state

    return solve
