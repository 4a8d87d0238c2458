"""RAFFLES: an iterative Judge / Evaluators loop for decisive-fault attribution.

The full specification, and how it departs from the paper and its code:
``docs/protocols/raffles.md``.

Zhu et al., "RAFFLES: Reasoning-based Attribution of Faults for LLM Systems", EACL 2026,
arXiv 2509.06822 (Capital One; no public code, so this follows the paper's description).

Protocol (one sample; every iteration is a span ``iteration_<k>``):

1. **Judge** (phase ``judge``, role ``judge``). One user turn: task, system, the step-numbered log
   and, from iteration 2 on, the **memory**: every earlier candidate with the Judge's rationales
   and every evaluator's verdict, confidence and reason. It proposes a candidate with a separate
   rationale for each of three criteria:
   - step-labelled data: ``{"agent", "step", "fault_rationale", "primacy_rationale",
     "decisiveness_rationale"}``;
   - vector-labelled data: ``{"faulty": [component ids], ...the three rationales}``; an empty
     list is the legal "no decisive fault" answer. (Step-labelled logs of known failures: the
     prompt says so and the schema asks for an agent and a step, as all-at-once does; under unknown
     outcome, ``solvers._framing``, ``"agent": null, "step": null`` is the candidate "no decisive
     error", which the evaluators check against criteria rewritten for it and the rule check
     passes.)
2. **Three LLM evaluators** (phases ``evaluator_fault``, ``evaluator_primacy``,
   ``evaluator_decisiveness``; role ``evaluator``), run concurrently with
   ``solvers._gather.gather``. Each sees the task, system and log, the candidate and the Judge's
   rationale for its own criterion (fault: a real mistake at that step; primacy: the first decisive
   mistake; decisiveness: it determined the outcome and was not corrected later) and answers
   ``{"reason", "satisfied": true|false, "confidence": 0..100}``, where confidence is how likely
   the criterion holds (0 = certainly violated, 100 = certainly satisfied). An unusable answer
   scores 0 and is recorded with its reason.
3. **Rule-based evaluator** (no call), confidence 0 or 100: step-labelled data, the candidate
   step exists and the candidate agent produced it (``Step.agent``); vector data, every named
   component is a component of the system (parsing already enforces it, so any usable vector
   candidate gets 100).
4. **Stopping rule.** The iteration's total is the sum of the four confidences (0..400). The loop
   stops as soon as a total exceeds ``threshold`` (``>``; default 350, the paper's: "exceeds"), or after
   ``max_iterations`` iterations (K, default 2, the paper's usual setting), or at a context
   overflow of the Judge (the memory only lengthens the next prompt). The answer is the candidate
   with the highest total in the history; ties go to the earlier iteration. A Judge answer that
   cannot be used (malformed, unknown agent, step outside the log) is recorded, scores 0, is not
   evaluated (1 call instead of 4) and goes into the memory with its reasons; if no iteration
   produced a usable candidate the Attribution is invalid with every reason.

Every iteration (candidate, rationales, evaluations, confidences, total, stop reason) is stored
under ``raffles_iterations`` (a list of JSON dicts), the chosen iteration under
``raffles_chosen``, and each iteration is also an ``InfoEvent`` in the transcript.

Calls per sample: sum over the iterations run of (1 + 3 if the Judge's answer was usable), so
4 when the first candidate exceeds the threshold and at most 4K; independent of the log length
n, though every call carries the whole log (O(n) tokens), and the Judge's prompt grows with the
memory.

Prompt layout (prefix caching): the Judge and the evaluators share one system prompt (the
panel and its roles; the role itself is named in the closing instructions), and every user turn
starts with the same task, system and log text; the memory and the instructions follow the log.
When one model serves both roles (the default), every call of a sample after the first repeats
the first call's prefix up to the end of the log, which prefix-caching servers reuse.

Where the paper is silent we chose: the evaluators read the whole log; the rule-based check for
vector data is membership; unusable evaluator answers count 0; the Judge's memory holds the full
history, not only the last iteration.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, as_int, refuse_unknown
from blame.render import (
    RenderBudget,
    cut_middle,
    fence,
    inline,
    inline_list,
    note_cuts,
    render_log,
    render_system,
    render_task,
)
from blame.schema import Attribution, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._gather import gather
from solvers._output import (
    AGENT_STEP,
    FAULTY,
    extract_json_object,
    final_answer,
    output_problem,
    parse_agent_step,
    parse_faulty,
)
from solvers._framing import admits_no_fault, is_no_fault, mistake, situation, told_failed, with_no_fault
from solvers.all_at_once import candidate_agents, named_step_schema, vector_schema
from solvers.step_by_step import parse_yes_no

ITERATIONS_KEY = "raffles_iterations"
CHOSEN_KEY = "raffles_chosen"
CRITERIA = ("fault", "primacy", "decisiveness")
MAX_TOTAL = 100 * (len(CRITERIA) + 1)
MEMORY_CHARS = 1200
"""Each rationale and evaluator reason is cut to this many characters in the memory."""

_PANEL = """\
You serve on a panel that diagnoses failures of LLM-based multi-agent systems. The Judge reads \
the complete log of one session, proposes {proposal} and justifies it criterion by \
criterion; independent evaluators then each check one criterion of the proposal, and the \
Judge's rationale for it, against the log. The end of the user message says which of these \
roles you have. Base every claim on evidence in the log, and do not accept a claim that the log \
does not support."""

PANEL_SYSTEM_PROMPT = {
    True: _PANEL.format(proposal="its decisive fault"),
    False: _PANEL.format(proposal="its decisive fault, or that it has none,"),
}
"""The Judge's and the evaluators' system prompt, by ``_framing.told_failed``."""

STEP_CRITERIA = {
    "fault": "Fault: the candidate agent made a real mistake at the candidate step (a wrong fact, "
    "action, plan or reading of earlier output), not a reasonable move that merely came before "
    "a failure.",
    "primacy": "Primacy: this mistake is the first decisive one: no earlier step holds a mistake "
    "that had already set the session on its way to failure.",
    "decisiveness": "Decisiveness: the mistake determined the outcome: no later step corrected "
    "it, and fixing it would plausibly have made the session succeed.",
}

VECTOR_CRITERIA = {
    "fault": "Fault: each named component was itself faulty in this session (an agent reasoning "
    "or acting wrongly, a device producing wrong data, a human giving wrong information, a "
    "channel corrupting messages); for the answer 'no faulty component', no component shows a "
    "fault.",
    "primacy": "Primacy: each named component is an origin of the hazard, not a component that "
    "only passed on or acted upon another component's fault, and no origin is missing.",
    "decisiveness": "Decisiveness: the named faults shaped the outcome of the session and were "
    "not caught and corrected later.",
}

JUDGE_STEP_INSTRUCTIONS = """\
You are the Judge. {situation} {propose} its decisive fault: the agent, and the step \
at which that agent made {mistake}. Steps are numbered from 0 as shown \
in the log ([step i]). A decisive fault meets three criteria:
1. {fault}
2. {primacy}
3. {decisiveness}

Answer with a JSON object only, with a separate rationale for each criterion:
{{"agent": "<one of: {agents}>", "step": <integer step index>, "fault_rationale": "...", \
"primacy_rationale": "...", "decisiveness_rationale": "..."}}{no_fault}"""

JUDGE_VECTOR_INSTRUCTIONS = """\
You are the Judge. {situation} Propose its decisive fault: the faulty component or components (an \
empty list if the log shows no decisive fault). A decisive fault meets three criteria:
1. {fault}
2. {primacy}
3. {decisiveness}

Answer with a JSON object only, with a separate rationale for each criterion:
{{"faulty": [<zero or more of: {components}>], "fault_rationale": "...", \
"primacy_rationale": "...", "decisiveness_rationale": "..."}}"""

MEMORY_INTRO = """\
Your earlier proposals and the evaluators' assessments (acceptance needs a total confidence \
above {threshold} of {max_total}):"""

MEMORY_OUTRO = """\
Revise your proposal in the light of this feedback: keep a candidate the evidence supports, \
otherwise propose a better one, and answer the evaluators' objections in your rationales."""

EVALUATOR_QUESTION = """\
You are an evaluator: strict and impartial. {situation} The Judge proposed as its decisive fault: {candidate}.

You check one criterion only.
{criterion}

The Judge's rationale for this criterion:
{rationale}

Check the criterion, and the rationale, against the log. Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "satisfied": <true or false>, \
"confidence": <integer from 0 to 100: how likely the criterion holds; 0 = certainly violated, \
100 = certainly satisfied>}}"""

NO_FAULT_CRITERIA = {
    "fault": "No fault: no agent made a real mistake (a wrong fact, action, plan or reading of "
    "earlier output) at any step of the log.",
    "primacy": "Nothing overlooked: no step, early or late, holds a mistake that set the session on "
    "its way to failure.",
    "decisiveness": "Outcome: the session did not fail, or any slip in it was corrected later or did "
    "not affect the outcome.",
}
"""Step-labelled data under unknown outcome: the criteria for the candidate "no decisive error"."""

NO_FAULT_FORMAT = (
    ' If the log shows no decisive error, answer with "agent": null and "step": null, and give the '
    "three rationales for that."
)

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


# --- schemas ----------------------------------------------------------------------------------


def judge_schema(trajectory: Trajectory) -> dict[str, Any]:
    """The all-at-once answer schema with the single ``reason`` replaced by three rationales
    (under unknown outcome, with its "no fault" twin: ``solvers._framing.with_no_fault``)."""
    base = named_step_schema(trajectory) if trajectory.label_kind == "step" else vector_schema(trajectory)
    properties = {k: v for k, v in base["properties"].items() if k != "reason"}
    properties.update({f"{c}_rationale": {"type": "string"} for c in CRITERIA})
    schema = {**base, "properties": properties, "required": list(properties)}
    return schema if told_failed(trajectory) or trajectory.label_kind != "step" else with_no_fault(schema)


def evaluator_schema() -> dict[str, Any]:
    """``{"reason", "satisfied", "confidence"}``; confidence is an enum 0..100 because Inspect's
    JSONSchema drops ``minimum``/``maximum``."""
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "satisfied": {"type": "boolean"},
            "confidence": {"type": "integer", "enum": list(range(101))},
        },
        "required": ["reason", "satisfied", "confidence"],
        "additionalProperties": False,
    }


# --- parsing ----------------------------------------------------------------------------------


def parse_candidate(text: str, trajectory: Trajectory) -> tuple[dict[str, Any] | None, dict[str, str], list[str]]:
    """(candidate, rationales, errors) from the Judge's final answer (``solvers._output``: the
    rationales come from the same object or lines as the candidate); candidate is None when
    unusable.

    A candidate is ``{"agent", "step", "faulty"}`` (vector data: ``step`` None, ``agent`` the
    single faulty component or None).
    """
    required, lines = (AGENT_STEP, ("agent", "step")) if trajectory.label_kind == "step" else (FAULTY, ("faulty",))
    data, _ = final_answer(text, required, (*lines, *(f"{c}_rationale" for c in CRITERIA)))
    rationales = {c: str((data or {}).get(f"{c}_rationale") or "") for c in CRITERIA}
    if trajectory.label_kind == "step" and admits_no_fault(trajectory) and is_no_fault(text):
        return {"agent": None, "step": None, "faulty": []}, rationales, []
    if trajectory.label_kind == "step":
        agent, step, _, errors = parse_agent_step(
            text, trajectory.system, len(trajectory.steps), candidate_agents(trajectory)
        )
        if errors:
            return None, rationales, errors
        return {"agent": agent, "step": step, "faulty": [agent]}, rationales, []
    faulty, _, errors = parse_faulty(text, trajectory.system)
    if errors:
        return None, rationales, errors
    return {"agent": faulty[0] if len(faulty) == 1 else None, "step": None, "faulty": faulty}, rationales, []


def parse_confidence(value: Any) -> tuple[int | None, str | None]:
    """(confidence, error): an integer 0..100 (also ``"85"``, ``"85%"``, ``85.0``)."""
    if isinstance(value, str):
        numbers = _NUMBER.findall(value[:1000])
        value = float(numbers[0]) if len(numbers) == 1 else value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None, f"confidence {value!r} is not an integer"
    if not 0 <= value <= 100:
        return None, f"confidence {value} is outside 0..100"
    return value, None


def parse_evaluation(text: str) -> tuple[bool | None, int | None, str, list[str]]:
    """(satisfied, confidence, reason, errors) from an evaluator's answer."""
    data = extract_json_object(text, "satisfied")
    if data is None:
        return None, None, "", ["no JSON object with 'satisfied' in the evaluator's answer"]
    satisfied, reason, errors = parse_yes_no(text, "satisfied")
    confidence, error = parse_confidence(data.get("confidence"))
    return satisfied, confidence, reason, errors + ([error] if error else [])


# --- prompts ----------------------------------------------------------------------------------


def describe(candidate: dict[str, Any], trajectory: Trajectory) -> str:
    """A candidate in words, e.g. ``agent coder at step 2`` or ``faulty components: a, b``."""
    if trajectory.label_kind == "step":
        if candidate["agent"] is None:
            return "no decisive error in the session"
        return f"agent {inline(candidate['agent'])} at step {candidate['step']}"
    return f"faulty components: {inline_list(candidate['faulty'])}" if candidate["faulty"] else "no faulty component"


def memory_entry(record: dict[str, Any], trajectory: Trajectory) -> str:
    """One iteration of the history as the Judge reads it next time, fenced (it quotes model text)."""
    lines = [f"Iteration {record['iteration']}:"]
    if record["candidate"] is None:
        lines.append("  your answer could not be used: " + "; ".join(record["judge_errors"]))
        return "\n".join(lines)
    lines.append(f"  candidate: {describe(record['candidate'], trajectory)}")
    for criterion in CRITERIA:
        lines.append(f"  your {criterion} rationale: {cut_middle(record['rationales'][criterion], MEMORY_CHARS)}")
    for e in record["evaluations"]:
        if e["valid"]:
            verdict = "satisfied" if e["satisfied"] else "violated"
            lines.append(f"  {e['criterion']} evaluator: {verdict}, confidence {e['confidence']}: {cut_middle(e['reason'], MEMORY_CHARS)}")
        else:
            lines.append(f"  {e['criterion']} evaluator: no usable assessment (confidence 0)")
    lines.append(f"  total confidence: {record['total']} of {MAX_TOTAL}")
    return fence("\n".join(lines))


def judge_prompt(trajectory: Trajectory, log_text: str, budget: RenderBudget, memory: list[str], threshold: int) -> str:
    """The Judge's user turn: task, system, log, memory (if any), instructions."""
    criteria = STEP_CRITERIA if trajectory.label_kind == "step" else VECTOR_CRITERIA
    if trajectory.label_kind == "step":
        instructions = JUDGE_STEP_INSTRUCTIONS.format(
            situation=situation(trajectory),
            propose="Propose" if told_failed(trajectory) else "If it contains one, propose",
            mistake=mistake(trajectory),
            agents=inline_list(candidate_agents(trajectory)),
            no_fault="" if told_failed(trajectory) else NO_FAULT_FORMAT,
            **criteria,
        )
    else:
        instructions = JUDGE_VECTOR_INSTRUCTIONS.format(
            situation=situation(trajectory), components=inline_list(trajectory.system.ids), **criteria
        )
    parts = [render_task(trajectory, budget), render_system(trajectory.system, budget), f"Session log:\n{log_text}"]
    if memory:
        parts += [MEMORY_INTRO.format(threshold=threshold, max_total=MAX_TOTAL), "\n\n".join(memory), MEMORY_OUTRO]
    return "\n\n".join([*parts, instructions])


def evaluator_prompt(
    trajectory: Trajectory, log_text: str, budget: RenderBudget, candidate: dict[str, Any], criterion: str, rationale: str
) -> str:
    """An evaluator's user turn for one criterion."""
    criteria = STEP_CRITERIA if trajectory.label_kind == "step" else VECTOR_CRITERIA
    if trajectory.label_kind == "step" and candidate["agent"] is None:
        criteria = NO_FAULT_CRITERIA
    question = EVALUATOR_QUESTION.format(
        situation=situation(trajectory),
        candidate=describe(candidate, trajectory),
        criterion=criteria[criterion],
        rationale=fence(rationale) or "(the Judge gave none)",
    )
    return "\n\n".join([render_task(trajectory, budget), render_system(trajectory.system, budget), f"Session log:\n{log_text}", question])


# --- evaluators -------------------------------------------------------------------------------


def rule_check(candidate: dict[str, Any], trajectory: Trajectory) -> dict[str, Any]:
    """The rule-based evaluator (confidence 0 or 100; see the module docstring)."""
    if trajectory.label_kind == "step" and candidate["agent"] is None:
        ok, reason = True, "no step is named, so there is nothing to check against the log"
    elif trajectory.label_kind == "step":
        step, agent = candidate["step"], candidate["agent"]
        if not 0 <= step < len(trajectory.steps):
            ok, reason = False, f"step {step} is outside the log"
        else:
            producer = trajectory.steps[step].agent
            ok = producer == agent
            reason = f"step {step} was produced by {producer}" + ("" if ok else f", not by {agent}")
    else:
        unknown = [c for c in candidate["faulty"] if c not in trajectory.system.ids]
        ok = not unknown
        reason = "every named component is a component of the system" if ok else f"unknown components {unknown}"
    return {"criterion": "rule", "satisfied": ok, "confidence": 100 if ok else 0, "reason": reason, "valid": True, "errors": []}


async def evaluate(
    model: Model,
    trajectory: Trajectory,
    log_text: str,
    budget: RenderBudget,
    candidate: dict[str, Any],
    criterion: str,
    rationale: str,
    attribution: Attribution,
    structured_output: bool,
) -> dict[str, Any]:
    """One LLM evaluator's call and its parsed assessment (an unusable one has confidence 0)."""
    async with span(f"evaluator_{criterion}"):
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=PANEL_SYSTEM_PROMPT[told_failed(trajectory)]),
            ChatMessageUser(content=evaluator_prompt(trajectory, log_text, budget, candidate, criterion, rationale)),
        ]
        output = await generate_answer(
            model,
            messages,
            attribution,
            phase=f"evaluator_{criterion}",
            schema=response_schema("evaluation", evaluator_schema()) if structured_output else None,
        )
    problem = output_problem(output)
    satisfied, confidence, reason, errors = (None, None, "", [problem]) if problem else parse_evaluation(output.completion)
    return {
        "criterion": criterion,
        "satisfied": satisfied,
        "confidence": confidence if not errors and confidence is not None else 0,
        "reason": reason,
        "valid": not errors,
        "errors": errors,
    }


# --- the solver -------------------------------------------------------------------------------


def choose(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The iteration with the highest total among those with a usable candidate (ties: the
    earlier), or None."""
    usable = [r for r in history if r["candidate"] is not None]
    return max(usable, key=lambda r: (r["total"], -r["iteration"])) if usable else None


@solver
def raffles(
    max_iterations: int = 2,
    threshold: int = 350,
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """RAFFLES: Judge + three LLM evaluators + a rule check, iterated with memory.

    Args:
        max_iterations: K, the most Judge iterations per sample (paper: 2).
        threshold: stop once an iteration's summed confidence exceeds this (0..400; paper: 350).
        structured_output: send each answer's JSON schema as the response format.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for the whole log, in characters.
        max_prompt_chars: budget per agent system prompt shown to the models.
    """
    refuse_unknown(raffles, kwargs)
    structured_output = as_bool("structured_output", structured_output)
    max_iterations = as_int("max_iterations", max_iterations, minimum=1)
    threshold = as_int("threshold", threshold, minimum=0, maximum=MAX_TOTAL)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="raffles")
        log = render_log(trajectory, budget)
        note_cuts(attribution, log)
        judge_model, evaluator_model = get_model(role="judge"), get_model(role="evaluator")
        schema = response_schema("raffles_candidate", judge_schema(trajectory)) if structured_output else None
        history: list[dict[str, Any]] = []
        memory: list[str] = []

        for k in range(1, max_iterations + 1):
            async with span(f"iteration_{k}"):
                async with span("judge"):
                    messages: list[ChatMessage] = [
                        ChatMessageSystem(content=PANEL_SYSTEM_PROMPT[told_failed(trajectory)]),
                        ChatMessageUser(content=judge_prompt(trajectory, log.text, budget, memory, threshold)),
                    ]
                    output = await generate_answer(judge_model, messages, attribution, phase="judge", schema=schema)
                state.messages, state.output = [*messages, output.message], output
                problem = output_problem(output)
                if problem:
                    candidate, rationales, errors = None, dict.fromkeys(CRITERIA, ""), [problem]
                else:
                    candidate, rationales, errors = parse_candidate(output.completion, trajectory)
                record: dict[str, Any] = {
                    "iteration": k,
                    "candidate": candidate,
                    "rationales": rationales,
                    "judge_errors": errors,
                    "evaluations": [],
                    "total": 0,
                    "stopped": None,
                }
                if candidate is not None:
                    async with span("evaluators"):
                        record["evaluations"] = await gather(
                            *(
                                evaluate(evaluator_model, trajectory, log.text, budget, candidate, c, rationales[c], attribution, structured_output)
                                for c in CRITERIA
                            )
                        )
                    record["evaluations"].append(rule_check(candidate, trajectory))
                    record["total"] = sum(e["confidence"] for e in record["evaluations"])
                if record["total"] > threshold and candidate is not None:
                    record["stopped"] = "threshold"
                elif output.stop_reason == "model_length":
                    record["stopped"] = "context overflow"
                elif k == max_iterations:
                    record["stopped"] = "max_iterations"
                history.append(record)
                memory.append(memory_entry(record, trajectory))
                transcript().info(record, source="raffles")
            if record["stopped"]:
                break

        best = choose(history)
        state.store.set(ITERATIONS_KEY, history)
        state.store.set(CHOSEN_KEY, best["iteration"] if best else None)
        if best is None:
            for record in history:
                attribution.invalid(f"iteration {record['iteration']}: " + "; ".join(record["judge_errors"]))
        else:
            candidate = best["candidate"]
            attribution.agent, attribution.step, attribution.faulty = candidate["agent"], candidate["step"], candidate["faulty"]
            attribution.reason = best["rationales"]["fault"]
        save_attribution(state, attribution)
        return state

    return solve
