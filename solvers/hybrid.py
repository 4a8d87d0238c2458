"""Hybrid: all-at-once picks the responsible agent, step-by-step then searches only its steps.

The full specification, and how it departs from the paper and its code:
``docs/protocols/step_search.md``.

The hybrid of Who&When (Zhang et al., ICML 2025, arXiv 2505.00212, Table 3: "all-at-once picks
the agent, step-by-step then searches that agent's turns"). Two phases, each a span:

1. ``judge``: exactly the all-at-once call (``solvers.all_at_once``: same prompt, same schema,
   same parsing). On step-labelled data it names an agent and a step; on vector-labelled data a
   set of faulty components.
2. ``step_by_step``: the step-by-step walk (``solvers.step_by_step.walk_steps``: prefix 0..i shown,
   "is step i the decisive error?") over the steps produced by the chosen agent (vector data: by
   any of the chosen components), stopping at the first "yes". The prediction is that step and
   its producer, which is the chosen agent (vector data: one of the chosen components).

Rules, all recorded in the store under ``hybrid``:

- The judge's answer is unusable: the Attribution is invalid with the judge's reasons; no walk.
  On step-labelled data only the agent is needed: a usable agent with an unusable step is
  walked all the same (and has no judge step to fall back on).
- The judge gives the "no fault" answer (vector data: no faulty component; step data under
  unknown outcome, ``solvers._framing``: agent and step null): that is the answer; no walk.
- Nothing flagged (also: the chosen agent never speaks, or the walk hit a context overflow):
  with ``fallback=True`` (default) the judge's own answer stands (step-labelled: its agent and
  step; vector: its faulty set); with ``fallback=False`` the Attribution is invalid.

Calls per sample: 1 + k, where k is the 1-based position of the first flagged step among the
chosen agent's n_a steps (k = n_a when none is flagged); 1 when no walk is needed.

Departures from the original: the same as all-at-once and step-by-step (step numbers shown,
reference answer only on request, JSON answers checked against the log). The original code has
no hybrid mode; the fallback to the judge's step is our choice, so that a search which flags
nothing still leaves the judge's complete answer rather than none.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, refuse_unknown
from blame.render import RenderBudget, note_cuts
from blame.schema import Attribution
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._output import output_problem
from solvers.all_at_once import (
    judge_prompt,
    read_answer,
    step_schema,
    system_prompt,
    vector_schema,
)
from solvers.step_by_step import (
    attribute_step,
    keep_exchange,
    searchable_steps,
    walk_steps,
)

HYBRID_KEY = "hybrid"
"""Store key: {"judge": {agent, step, faulty, valid, errors}, "searched": [...], "verdicts": [...],
"outcome": "flagged" | "fallback" | "no_fault" | "invalid"}."""


@solver
def hybrid(
    fallback: bool = True,
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """All-at-once names the agent; step-by-step over that agent's steps names the step.

    Args:
        fallback: when the walk flags none of the agent's steps, keep the all-at-once answer
            (True) or mark the Attribution invalid (False).
        structured_output: send each answer's JSON schema as the response format.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for the whole log (and each prefix), in characters.
        max_prompt_chars: budget per agent system prompt shown to the judge.
    """
    refuse_unknown(hybrid, kwargs)
    fallback = as_bool("fallback", fallback)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="hybrid")
        model = get_model(role="judge")
        record: dict = {"searched": [], "verdicts": []}

        async with span("judge"):
            prompt, judge_log = judge_prompt(trajectory, budget)
            note_cuts(attribution, judge_log)
            schema = step_schema(trajectory) if trajectory.label_kind == "step" else vector_schema(trajectory)
            messages = [ChatMessageSystem(content=system_prompt(trajectory)), ChatMessageUser(content=prompt)]
            output = await generate_answer(
                model,
                messages,
                attribution,
                phase="judge",
                schema=response_schema("attribution", schema) if structured_output else None,
            )
        state.messages = [*messages, output.message]
        state.output = output
        judge = Attribution(method="all_at_once")
        problem = output_problem(output)
        if problem:
            judge.invalid(problem)
        else:
            read_answer(output.completion, trajectory, judge)
        record["judge"] = judge.model_dump(include={"agent", "step", "faulty", "valid", "errors", "reason"})

        # On step data the walk needs only the judge's agent: a usable agent with an unusable
        # step still gets its walk (the fallback then has no step to offer).
        usable = judge.valid or (trajectory.label_kind == "step" and judge.agent is not None)
        if not usable:
            record["outcome"] = "invalid"
            for error in judge.errors:
                attribution.invalid(f"judge: {error}")
        elif not judge.faulty:  # the legal "no fault" answer (vector data; unknown outcome)
            record["outcome"] = "no_fault"
            attribution.reason = judge.reason
        else:
            chosen = set(judge.faulty)
            indices = [i for i in searchable_steps(trajectory) if trajectory.steps[i].agent in chosen]
            record["searched"] = indices
            async with span("step_by_step"):
                walk = await walk_steps(model, trajectory, indices, attribution, budget, structured_output)
            keep_exchange(state, walk)
            record["verdicts"] = walk.verdicts
            note_cuts(attribution, walk.cuts)
            if walk.flagged is not None:
                record["outcome"] = "flagged"
                attribution.reason = walk.verdicts[-1]["reason"]
                attribute_step(attribution, trajectory, walk.flagged)
            elif fallback and judge.valid:
                record["outcome"] = "fallback"
                attribution.agent, attribution.step = judge.agent, judge.step
                attribution.faulty, attribution.reason = judge.faulty, judge.reason
            else:
                record["outcome"] = "invalid"
                why = walk.overflow or f"{len(walk.verdicts)} steps asked, {walk.unusable} answers unusable"
                attribution.invalid(f"no step of {', '.join(judge.faulty)} was judged decisive ({why})")
                for error in judge.errors:
                    attribution.invalid(f"judge: {error}")
        state.store.set(HYBRID_KEY, record)
        save_attribution(state, attribution)
        return state

    return solve
