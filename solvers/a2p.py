"""A2P (Abduct-Act-Predict): one structured pass of causal reasoning that names the decisive error.

The full specification and every choice the paper leaves open: ``docs/protocols/a2p.md``. Built
from the paper's description (West et al., "Abduct, Act, Predict: Scaffolding Causal Inference
for Automated Failure Attribution in Multi-Agent Systems", arXiv 2509.10401); reference code:
jimmywang585/A2P (8fd0d4b0), departures from it in ``docs/protocols/a2p.md``.

One call (role ``judge``) reads the task, the components and the step-numbered log, and answers
one JSON object whose fields are filled in order:

1. ``abduction``: the hidden cause behind an agent's action that best explains the outcome;
2. ``action``: the minimal corrective intervention at that step;
3. ``prediction``: the rest of the session under that correction, and whether it would then
   succeed (the instructions ask for a new hypothesis when it would not);
4. ``agent`` and ``step``: the responsible agent and the decisive step.

Under unknown outcome (``solvers._framing``) ``agent`` and ``step`` null is the valid "no fault"
answer. On vector-labelled data (BLAME) the answer may name any component and the prediction is
that one component (``faulty = [agent]``), as for the online auditor and the step searches. The
three reasoning fields are recorded in the store under :data:`STORE_KEY`; only the agent and step
decide validity.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, refuse_unknown
from blame.render import RenderBudget, inline_list, note_cuts
from blame.schema import Attribution, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._framing import is_no_fault, no_fault_clause, situation, told_failed, with_no_fault
from solvers._output import final_answer, output_problem, parse_agent_step
from solvers.all_at_once import system_prompt
from solvers.online_auditor import candidates as nameable
from solvers.propose_verify import context

STORE_KEY = "a2p"
"""Store key: the answer's ``abduction``, ``action`` and ``prediction`` (empty when missing)."""

REASONING = ("abduction", "action", "prediction")

INSTRUCTIONS = """\
{situation} {identify} the decisive error by reasoning in three stages, in this order:

1. Abduction: infer the hidden cause behind an agent's action (what it misunderstood, assumed or \
overlooked) that best explains how the session went.
2. Action: state the minimal corrective intervention: the smallest change to that one action \
that removes the cause.
3. Prediction: predict how the rest of the session would unfold with that correction, and check \
that the session would then succeed. If it would not, return to stage 1 with another hypothesis.

Then name the agent whose action you corrected and the step of that action. Steps are numbered \
from 0 as shown in the log ([step i]).

Answer with a JSON object only:
{{"abduction": "<the inferred cause>", "action": "<the minimal correction>", \
"prediction": "<the corrected session and whether it would then succeed>", \
"agent": "<one of: {agents}>", "step": <integer step index>}}{no_fault}"""


def answer_schema(trajectory: Trajectory) -> dict[str, Any]:
    """The answer's JSON schema: the three stages in order, then an agent among :func:`nameable`
    and a step of the log; under unknown outcome also the "no fault" twin."""
    schema = {
        "type": "object",
        "properties": {
            **{field: {"type": "string"} for field in REASONING},
            "agent": {"type": "string", "enum": nameable(trajectory)},
            "step": {"type": "integer", "enum": list(range(len(trajectory.steps)))},
        },
        "required": [*REASONING, "agent", "step"],
        "additionalProperties": False,
    }
    return schema if told_failed(trajectory) else with_no_fault(schema)


def instructions(trajectory: Trajectory) -> str:
    return INSTRUCTIONS.format(
        situation=situation(trajectory),
        identify="Find" if told_failed(trajectory) else "If it contains one, find",
        agents=inline_list(nameable(trajectory)),
        no_fault=no_fault_clause(trajectory),
    )


def read_answer(text: str, trajectory: Trajectory, attribution: Attribution) -> dict[str, str]:
    """Fill ``attribution`` from the answer (invalid with reasons when unusable); the three
    reasoning fields as found."""
    data, _ = final_answer(text, ("agent", "step"), ("agent", "step", *REASONING))
    reasoning = {field: str((data or {}).get(field) or "") for field in REASONING}
    attribution.reason = reasoning["abduction"]
    if not told_failed(trajectory) and is_no_fault(text):
        attribution.reason = attribution.reason or "no decisive error"
        return reasoning
    agent, step, _, errors = parse_agent_step(text, trajectory.system, len(trajectory.steps), nameable(trajectory))
    attribution.agent, attribution.step = agent, step
    attribution.faulty = [agent] if agent else []
    for error in errors:
        attribution.invalid(error)
    return reasoning


@solver
def a2p(
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """A2P: abduction, action, prediction, then agent and step, in one call per sample.

    Args:
        structured_output: send the answer's JSON schema as the response format (the stages
            come before the agent and step, so constrained decoding reasons first).
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for the whole log, in characters.
        max_prompt_chars: budget per agent system prompt shown to the judge.
    """
    refuse_unknown(a2p, kwargs)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="a2p")
        async with span("abduct_act_predict"):
            shared, log = context(trajectory, budget)
            note_cuts(attribution, log)
            messages = [ChatMessageSystem(content=system_prompt(trajectory)),
                        ChatMessageUser(content=f"{shared}\n\n{instructions(trajectory)}")]
            output = await generate_answer(
                get_model(role="judge"), messages, attribution, phase="abduct_act_predict",
                schema=response_schema("a2p", answer_schema(trajectory)) if structured_output else None,
            )
        state.messages = [*messages, output.message]
        state.output = output
        problem = output_problem(output)
        if problem:
            attribution.invalid(problem)
            reasoning = dict.fromkeys(REASONING, "")
        else:
            reasoning = read_answer(output.completion, trajectory, attribution)
        state.store.set(STORE_KEY, reasoning)
        save_attribution(state, attribution)
        return state

    return solve
