"""Propose-and-verify: P proposers name a decisive error, V verifiers check each candidate.

The full specification, every choice the paper leaves open and how this departs from it:
``docs/protocols/propose_verify.md``.

AgentForesight's labeller for naturally failed runs (Zhang et al. 2026, "AgentForesight: Online
Auditing for Early Failure Prediction in Multi-Agent Systems", arXiv 2605.08715, section 3.1, its
diagnostic stream), used here as an attribution method. Two waves of independent calls, each an
Inspect span:

1. ``propose``: ``proposers`` calls, concurrently, each read the whole log and answer
   ``{"reason", "agent", "step"}`` (under unknown outcome also the "no fault" answer). Equal
   (step, agent) pairs, after the agent is resolved to a component, are one candidate.
2. ``verify``: every distinct candidate gets ``verifiers`` calls, all concurrently, each answering
   four yes/no questions (the error exists at that step; it is substantive; it is decisive; it is
   the earliest such error) and a confidence in [0, 1]. Support = the verifiers answering all four
   yes; an unreadable answer is no support.

Decision (:func:`decide`, the single source of truth): a candidate is admitted when its support
exceeds V/2 (at least floor(V/2) + 1: our reading of "exceeds the majority threshold", for which
the description gives no equation); the winner is the admitted candidate with the highest
support, then the higher mean confidence of its supporting verifiers (exact:
:func:`mean_confidence`), then more proposers, then the earliest step, then the first proposed.
Nothing admitted: "no verified fault" (valid; ``abstained`` on a known failure, "no fault" under
unknown outcome). Every proposer unreadable: invalid. Under unknown outcome, more than half of the
proposers answering "no fault" is the answer, and nothing is verified.

On vector-labelled data (BLAME) a candidate may name any component and the prediction is that one
component (``faulty = [agent]``), as for the online auditor and the step searches.

Every call carries its own ``seed`` (:func:`call_seed`) and the ``temperature`` option; the calls
and answers are recorded in the store under :data:`STORE_KEY`.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from blame.arguments import as_bool, as_float, as_int, refuse_unknown
from blame.render import RenderBudget, RenderedLog, inline, inline_list, note_cuts, render_log, render_system, render_task
from blame.schema import Attribution, Candidate, Trajectory
from blame.state import model_view_from_state, save_attribution
from solvers._calls import generate_answer, response_schema
from solvers._framing import is_no_fault, no_fault_clause, situation, told_failed, with_no_fault
from solvers._gather import gather
from solvers._output import _shown, final_answer, output_problem, parse_agent_step
from solvers.all_at_once import system_prompt
from solvers.online_auditor import candidates as nameable

STORE_KEY = "propose_verify"
"""Store key: ``{"proposals": [...], "verdicts": [...], "no_fault_majority": bool}``."""

PROPOSE_INSTRUCTIONS = """\
{situation} {identify} the decisive error: the earliest step at which a component made the \
mistake that decided the outcome, and the component responsible for it. Steps are numbered \
from 0 as shown in the log ([step i]).

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "agent": "<one of: {agents}>", "step": <integer step index>}}{no_fault}"""

VERIFY_INSTRUCTIONS = """\
{situation} Another reviewer names this candidate for the decisive error: step {step}, \
with {agent} responsible. Check the candidate against the log and answer four questions:

- error_exists: at step {step}, {agent} made an error.
- substantive: the error matters to the task (not cosmetic: wording, format, politeness).
- decisive: correcting that error would have changed the outcome of the session.
- earliest: no earlier step holds an error that meets the three conditions above.

Then give your confidence, from 0 to 1, that the candidate is the decisive error.

Answer with a JSON object only:
{{"reason": "<one or two sentences of evidence>", "error_exists": <true or false>, \
"substantive": <true or false>, "decisive": <true or false>, "earliest": <true or false>, \
"confidence": <number from 0 to 1>}}"""

QUESTIONS = ("error_exists", "substantive", "decisive", "earliest")
CONFIDENCE_LEVELS = [round(i / 10, 1) for i in range(11)]
"""The confidences the response schema offers (an ``enum``: Inspect drops ``minimum``/``maximum``);
the parser accepts any number in [0, 1]."""
_YES = {"yes", "true", "y"}
_NO = {"no", "false", "n"}


# --- schemas and prompts ---------------------------------------------------------------------


def proposal_schema(trajectory: Trajectory) -> dict[str, Any]:
    """A proposer's answer: an agent among :func:`nameable` and a step of the log; under unknown
    outcome also the "no fault" twin."""
    schema = {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "agent": {"type": "string", "enum": nameable(trajectory)},
            "step": {"type": "integer", "enum": list(range(len(trajectory.steps)))},
        },
        "required": ["reason", "agent", "step"],
        "additionalProperties": False,
    }
    return schema if told_failed(trajectory) else with_no_fault(schema)


def verdict_schema() -> dict[str, Any]:
    """A verifier's answer: the four yes/no questions and a confidence."""
    return {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            **{q: {"type": "boolean"} for q in QUESTIONS},
            "confidence": {"type": "number", "enum": CONFIDENCE_LEVELS},
        },
        "required": ["reason", *QUESTIONS, "confidence"],
        "additionalProperties": False,
    }


def context(trajectory: Trajectory, budget: RenderBudget) -> tuple[str, RenderedLog]:
    """The part every call of a sample shares (task, system, log) and the rendered log (what was cut)."""
    log = render_log(trajectory, budget)
    text = "\n\n".join([render_task(trajectory, budget), render_system(trajectory.system, budget), f"Session log:\n{log.text}"])
    return text, log


def propose_prompt(trajectory: Trajectory) -> str:
    return PROPOSE_INSTRUCTIONS.format(
        situation=situation(trajectory),
        identify="Identify" if told_failed(trajectory) else "If it contains one, identify",
        agents=inline_list(nameable(trajectory)),
        no_fault=no_fault_clause(trajectory),
    )


def verify_prompt(trajectory: Trajectory, candidate: Candidate) -> str:
    return VERIFY_INSTRUCTIONS.format(situation=situation(trajectory), step=candidate.step,
                                      agent=inline(candidate.agent))


# --- seeds, reading answers, the decision ------------------------------------------------------


def call_seed(seed: int, epoch: int, phase: str, index: int) -> int:
    """The seed of one call: the first 31 bits of sha256(seed, epoch, phase, index), so every call
    of a sample and every epoch gets its own reproducible seed."""
    payload = json.dumps([seed, epoch, phase, index]).encode("utf-8")
    return int.from_bytes(hashlib.sha256(payload).digest()[:4], "big") >> 1


def read_proposal(text: str, trajectory: Trajectory) -> dict[str, Any]:
    """One proposer's answer as ``{"kind": "candidate"|"no_fault"|"unreadable", ...}``."""
    if not told_failed(trajectory) and is_no_fault(text):
        return {"kind": "no_fault"}
    agent, step, reason, errors = parse_agent_step(text, trajectory.system, len(trajectory.steps),
                                                   nameable(trajectory))
    if errors:
        return {"kind": "unreadable", "errors": errors}
    return {"kind": "candidate", "agent": agent, "step": step, "reason": reason}


def _yes_no(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _YES | _NO:
        return value.strip().lower() in _YES
    return None


def read_verdict(text: str) -> dict[str, Any]:
    """One verifier's answer: ``{"supports", "confidence", "answers", "errors"}``. It supports the
    candidate only if all four answers are yes; any unreadable part makes it no support, with the
    reason in ``errors``."""
    data, _ = final_answer(text, (*QUESTIONS, "confidence"), (*QUESTIONS, "confidence", "reason"))
    if data is None:
        return {"supports": False, "confidence": None, "answers": {},
                "errors": [f"no JSON object with {', '.join(QUESTIONS)} and confidence in the answer"]}
    errors, answers = [], {}
    for question in QUESTIONS:
        answers[question] = _yes_no(data.get(question))
        if answers[question] is None:
            errors.append(f"{question} is {_shown(data.get(question))}, not yes/no")
    confidence = _confidence(data.get("confidence"))
    if confidence is None:
        errors.append(f"confidence {_shown(data.get('confidence'))} is not a number in [0, 1]")
    supports = not errors and all(answers.values())
    return {"supports": supports, "confidence": confidence, "answers": answers, "errors": errors}


def _confidence(value: Any) -> float | None:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None
    return float(value)


def distinct_candidates(proposals: list[dict[str, Any]]) -> list[Candidate]:
    """One Candidate per distinct (step, agent), in order of first proposal, counting proposers."""
    found: dict[tuple[int, str], Candidate] = {}
    for p in proposals:
        if p["kind"] == "candidate":
            key = (p["step"], p["agent"])
            if key not in found:
                found[key] = Candidate(step=p["step"], agent=p["agent"], proposers=0, support=0)
            found[key].proposers += 1
    return list(found.values())


def majority(verifiers: int) -> int:
    """The admission threshold: floor(V/2) + 1 supporting verifiers, the least support > V/2."""
    return verifiers // 2 + 1


def mean_confidence(candidate: Candidate) -> Fraction:
    """The exact mean of the supporting verifiers' confidences (0 when there are none): each read
    as the shortest decimal that gives its float (``repr``: ``0.8`` is 4/5), summed as fractions,
    so equal decimal means compare equal (float means of [0.5, 0.5, 0.8] and [0.8, 0.8, 0.2]
    differ in the 16th digit)."""
    if not candidate.confidences:
        return Fraction(0)
    return sum((Fraction(repr(c)) for c in candidate.confidences), Fraction(0)) / len(candidate.confidences)


def decide(candidates: list[Candidate], verifiers: int) -> Candidate | None:
    """Mark the admitted candidates (support >= :func:`majority`) and return the winner (None when
    none is admitted): highest support, then higher :func:`mean_confidence`, then more proposers,
    then the earliest step; a complete tie (one step, several agents) goes to the first in
    ``candidates``, the order of first proposal."""
    for c in candidates:
        c.admitted = c.support >= majority(verifiers)
    admitted = [c for c in candidates if c.admitted]
    if not admitted:
        return None
    return min(admitted, key=lambda c: (-c.support, -mean_confidence(c), -c.proposers, c.step))


# --- the solver ------------------------------------------------------------------------------


@solver
def propose_verify(
    proposers: int = 3,
    verifiers: int = 3,
    temperature: float = 0.7,
    seed: int = 0,
    structured_output: bool = True,
    max_step_chars: int = RenderBudget.max_step_chars,
    max_log_chars: int = RenderBudget.max_total_chars,
    max_prompt_chars: int = RenderBudget.max_prompt_chars,
    **kwargs: Any,
) -> Solver:
    """Propose-and-verify (AgentForesight's labelling ensemble) as an attribution method.

    Args:
        proposers: P, independent proposer calls (role ``proposer``).
        verifiers: V, independent verifier calls per distinct candidate (role ``verifier``).
        temperature: sampling temperature of every proposer and verifier call.
        seed: base of the per-call seeds (:func:`call_seed`).
        structured_output: send each answer's JSON schema as the response format.
        max_step_chars: render budget per step, in characters (see ``blame.render``).
        max_log_chars: render budget for the whole log, in characters.
        max_prompt_chars: budget per agent system prompt shown.
    """
    refuse_unknown(propose_verify, kwargs)
    proposers = as_int("proposers", proposers, minimum=1)
    verifiers = as_int("verifiers", verifiers, minimum=1)
    temperature = as_float("temperature", temperature, minimum=0)
    seed = as_int("seed", seed)
    structured_output = as_bool("structured_output", structured_output)
    budget = RenderBudget(max_step_chars, max_log_chars, max_prompt_chars)
    settings = {"proposers": proposers, "verifiers": verifiers, "temperature": temperature, "seed": seed}

    async def ask(model: Model, trajectory: Trajectory, shared: str, question: str, attribution: Attribution,
                  phase: str, index: int, schema: dict[str, Any], epoch: int) -> str | list[str]:
        """One call; its answer text, or the reasons it holds none."""
        async with span(f"{phase}-{index}"):
            messages = [ChatMessageSystem(content=system_prompt(trajectory)), ChatMessageUser(content=f"{shared}\n\n{question}")]
            output = await generate_answer(
                model, messages, attribution, phase=phase,
                schema=response_schema(phase, schema) if structured_output else None,
                config=GenerateConfig(temperature=temperature, seed=call_seed(seed, epoch, phase, index)),
            )
        problem = output_problem(output)
        return [problem] if problem else output.completion

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = model_view_from_state(state)
        attribution = Attribution(method="propose_verify", settings=settings)
        shared, log = context(trajectory, budget)
        note_cuts(attribution, log)
        record: dict[str, Any] = {"proposals": [], "verdicts": [], "no_fault_majority": False}

        async with span("propose"):
            model = get_model(role="proposer")
            answers = await gather(*[
                ask(model, trajectory, shared, propose_prompt(trajectory), attribution, "propose", i,
                    proposal_schema(trajectory), state.epoch)
                for i in range(proposers)
            ])
        proposals = [read_proposal(a, trajectory) if isinstance(a, str) else {"kind": "unreadable", "errors": a}
                     for a in answers]
        record["proposals"] = proposals
        candidates = distinct_candidates(proposals)
        attribution.candidates = candidates

        if all(p["kind"] == "unreadable" for p in proposals):
            for i, p in enumerate(proposals):
                attribution.invalid(f"proposer {i}: " + "; ".join(p["errors"]))
        elif 2 * sum(p["kind"] == "no_fault" for p in proposals) > proposers:
            record["no_fault_majority"] = True
            attribution.reason = "more than half of the proposers found no decisive error"
        else:
            await verify(trajectory, shared, candidates, attribution, record, state.epoch)
            conclude(trajectory, candidates, attribution)
        state.store.set(STORE_KEY, record)
        save_attribution(state, attribution)
        return state

    async def verify(trajectory: Trajectory, shared: str, candidates: list[Candidate], attribution: Attribution,
                     record: dict[str, Any], epoch: int) -> None:
        """All candidates' verifier calls in one wave; fills each candidate's support."""
        if not candidates:
            return
        async with span("verify"):
            model = get_model(role="verifier")
            jobs = [(c, j) for c in candidates for j in range(verifiers)]
            answers = await gather(*[
                ask(model, trajectory, shared, verify_prompt(trajectory, c), attribution, "verify", k,
                    verdict_schema(), epoch)
                for k, (c, j) in enumerate(jobs)
            ])
        for (c, j), answer in zip(jobs, answers):
            verdict = read_verdict(answer) if isinstance(answer, str) else {
                "supports": False, "confidence": None, "answers": {}, "errors": answer}
            record["verdicts"].append({"step": c.step, "agent": c.agent, "verifier": j, **verdict})
            if verdict["supports"]:
                c.support += 1
                c.confidences.append(verdict["confidence"])

    def conclude(trajectory: Trajectory, candidates: list[Candidate], attribution: Attribution) -> None:
        winner = decide(candidates, verifiers)
        if winner is None:
            attribution.abstained = told_failed(trajectory)
            attribution.reason = "no verified fault: no candidate reached the majority of verifiers"
            return
        attribution.agent, attribution.step, attribution.faulty = winner.agent, winner.step, [winner.agent]
        attribution.reason = (f"step {winner.step} by {winner.agent}: {winner.support} of {verifiers} verifiers, "
                              f"{winner.proposers} of {proposers} proposers")

    return solve
