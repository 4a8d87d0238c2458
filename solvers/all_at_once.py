"""All-at-once: one external judge reads the whole session and names the fault in one call.

The single-LLM baseline of Who&When (Zhang et al., "Which Agent Causes Task Failures and
When?", ICML 2025, arXiv 2505.00212) and of the POIROT/BLAME paper. The judge sees, in one
user turn: the task given to the system, the system's components and agents' system prompts,
and the step-numbered log (``blame.render``). It answers in a JSON schema:

- step-labelled data (Who&When): ``{"reason", "agent", "step"}``; ``agent`` is one of the
  system's agents, ``step`` a 0-based step index of the log; under unknown outcome (a task with
  safe controls, ``solvers._framing``) the prompt says the session may or may not have failed and
  ``{"reason", "agent": null, "step": null}`` is the valid "no fault" answer;
- vector-labelled data (BLAME): ``{"reason", "faulty"}``; ``faulty`` lists the components
  judged faulty (any number, possibly none).

Departures from the original Who&When code, on purpose: steps are numbered in the prompt (the
original shows none); the prompt lists the system's components and agents' system prompts and the
system prompt is ours (the original's is "a helpful assistant skilled in analyzing
conversations", with no component list), so that every method sees the system alike; the
reference answer is shown only when the task asks for it (the original always shows it); and the
answer is JSON checked against the log (the original parsed ``Agent Name:`` lines and scored them
by substring). Every prompt opens with the framing sentence (``solvers._framing``), and under
unknown outcome the system prompt is its neutral variant (:data:`SYSTEM_PROMPT`).

The judge is the model bound to the role ``judge`` (``--model-role judge=...``), else the
evaluated model. An unusable answer is an invalid Attribution with the reason; it never raises.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, refuse_unknown
from blame.render import RenderBudget, RenderedLog, inline_list, note_cuts, render_log, render_system, render_task
from blame.schema import Attribution, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._framing import admits_no_fault, is_no_fault, mistake, no_fault_clause, situation, told_failed, with_no_fault
from solvers._output import AGENT_STEP, final_answer, output_problem, parse_agent_step, parse_faulty

_EXPERT = "You are an impartial expert in diagnosing failures of LLM-based multi-agent systems. You read \
the complete log of one session of such a system and decide "
_EVIDENCE = " Base every judgement on evidence in the log; do not assume a fault without evidence."

SYSTEM_PROMPT = {
    True: f"{_EXPERT}which component caused the failure.{_EVIDENCE}",
    False: f"{_EXPERT}whether a component made a decisive error and, if one did, which.{_EVIDENCE}",
}
"""The judge's system prompt by ``_framing.told_failed`` (shared by the methods that import it)."""

IDENTIFY = {
    True: "Identify the agent responsible for the failure and the step of its decisive error",
    False: "If it contains one, identify the agent that made the decisive error and the step of that error",
}
"""The request for an agent and a step, by ``_framing.told_failed``."""

STEP_INSTRUCTIONS = """\
{situation} {identify}: the earliest step at which that agent made {mistake}. Steps are \
numbered from 0 as shown in the log ([step i]).

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "agent": "<one of: {agents}>", "step": <integer step index>}}{no_fault}"""

VECTOR_INSTRUCTIONS = """\
{situation} A fault may be an agent reasoning or acting wrongly, a device producing wrong data, a \
human giving wrong information or a channel corrupting messages. Identify every faulty component. \
List a component only if the log gives evidence of its own fault, not of a fault it merely passed on.

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "faulty": [<zero or more of: {components}>]}}"""


def system_prompt(trajectory: Trajectory) -> str:
    """The judge's system prompt for this view's framing (:data:`SYSTEM_PROMPT`)."""
    return SYSTEM_PROMPT[told_failed(trajectory)]


def candidate_agents(trajectory: Trajectory) -> list[str]:
    """Components a step-level answer may name: the system's agents (all components if none)."""
    agents = [c.id for c in trajectory.system.agents]
    return agents or trajectory.system.ids


def step_schema(trajectory: Trajectory) -> dict[str, Any]:
    """JSON schema of a step-level answer for this trajectory (agents and step range bound); under
    unknown outcome also its "no fault" twin (``solvers._framing.with_no_fault``).

    The step range is an ``enum``: Inspect's ``JSONSchema`` keeps ``enum`` but silently drops
    ``minimum``/``maximum`` (and ``uniqueItems``) before the schema reaches the provider.
    """
    schema = named_step_schema(trajectory)
    return schema if told_failed(trajectory) else with_no_fault(schema)


def named_step_schema(trajectory: Trajectory) -> dict[str, Any]:
    """The object schema of a step-level answer that names an agent and a step."""
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "agent": {"type": "string", "enum": candidate_agents(trajectory)},
            "step": {"type": "integer", "enum": list(range(len(trajectory.steps)))},
        },
        "required": ["reason", "agent", "step"],
        "additionalProperties": False,
    }


def vector_schema(trajectory: Trajectory) -> dict[str, Any]:
    """JSON schema of a vector-level answer: a set of this system's component ids."""
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "faulty": {
                "type": "array",
                "items": {"type": "string", "enum": trajectory.system.ids},
                "uniqueItems": True,
            },
        },
        "required": ["reason", "faulty"],
        "additionalProperties": False,
    }


def judge_prompt(trajectory: Trajectory, budget: RenderBudget) -> tuple[str, RenderedLog]:
    """The judge's user turn and the rendered log (what was cut to fit ``budget``)."""
    log = render_log(trajectory, budget)
    if trajectory.label_kind == "step":
        instructions = STEP_INSTRUCTIONS.format(
            situation=situation(trajectory),
            identify=IDENTIFY[told_failed(trajectory)],
            mistake=mistake(trajectory),
            agents=inline_list(candidate_agents(trajectory)),
            no_fault=no_fault_clause(trajectory),
        )
    else:
        instructions = VECTOR_INSTRUCTIONS.format(situation=situation(trajectory), components=inline_list(trajectory.system.ids))
    text = "\n\n".join(
        [render_task(trajectory, budget), render_system(trajectory.system, budget), f"Session log:\n{log.text}", instructions]
    )
    return text, log


def read_answer(text: str, trajectory: Trajectory, attribution: Attribution) -> Attribution:
    """Fill ``attribution`` from the judge's answer text, marking it invalid with reasons."""
    if trajectory.label_kind == "step" and admits_no_fault(trajectory) and is_no_fault(text):
        attribution.reason = no_fault_reason(text)
        return attribution
    if trajectory.label_kind == "step":
        agent, step, reason, errors = parse_agent_step(
            text, trajectory.system, len(trajectory.steps), candidate_agents(trajectory)
        )
        attribution.agent, attribution.step, attribution.reason = agent, step, reason
        attribution.faulty = [agent] if agent else []
    else:
        faulty, reason, errors = parse_faulty(text, trajectory.system)
        attribution.faulty, attribution.reason = faulty, reason
        attribution.agent = faulty[0] if len(faulty) == 1 else None
    for error in errors:
        attribution.invalid(error)
    return attribution


def no_fault_reason(text: str) -> str:
    """The ``reason`` of a "no fault" answer (empty when it gives none)."""
    data, _ = final_answer(text, AGENT_STEP, ("agent", "step", "reason"))
    return str((data or {}).get("reason") or "no decisive error")


@solver
def all_at_once(
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """The single external judge (one call per sample).

    Args:
        structured_output: send the answer's JSON schema as the response format (providers
            that support constrained decoding then enforce it); the text is parsed either way.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for the whole log, in characters.
        max_prompt_chars: budget per agent system prompt shown to the judge.
    """
    refuse_unknown(all_at_once, kwargs)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="all_at_once")
        async with span("judge"):
            prompt, log = judge_prompt(trajectory, budget)
            note_cuts(attribution, log)
            schema = step_schema(trajectory) if trajectory.label_kind == "step" else vector_schema(trajectory)
            messages = [ChatMessageSystem(content=system_prompt(trajectory)), ChatMessageUser(content=prompt)]
            output = await generate_answer(
                get_model(role="judge"),
                messages,
                attribution,
                phase="judge",
                schema=response_schema("attribution", schema) if structured_output else None,
            )
        state.messages = [*messages, output.message]
        state.output = output
        problem = output_problem(output)
        if problem:
            attribution.invalid(problem)
        else:
            read_answer(output.completion, trajectory, attribution)
        save_attribution(state, attribution)
        return state

    return solve
