"""POIROT's answer formats: the JSON schemas of reports, questions and votes, and their readers.

Readers never raise on model output: a report without usable JSON keeps the answer's text (it is
prose for the peers either way); unusable questions are dropped with the reason; a vote with any
unusable part (no JSON, an id outside the hazard space, a missing or out-of-range step on
step-labelled data, an empty or cut-off answer) is invalid with the reasons. Parsing uses the
suite's shared rules (``solvers._output``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ModelOutput

from blame.schema import Report, SystemSpec, Vote
from solvers._output import (
    FAULTY,
    bound_text,
    extract_json_object,
    final_answer,
    output_problem,
    parse_step,
    read_faulty,
    resolve_component,
)


def report_schema() -> dict[str, Any]:
    """JSON schema of a self-assessment."""
    return {
        "type": "object",
        "properties": {
            "own_trajectory": {"type": "string"},
            "anomalies": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["own_trajectory", "anomalies"],
        "additionalProperties": False,
    }


def questions_schema(peers: list[str]) -> dict[str, Any]:
    """JSON schema of a persona's questions (addressees bound to its peers)."""
    question = {
        "type": "object",
        "properties": {"to": {"type": "string", "enum": peers}, "question": {"type": "string"}},
        "required": ["to", "question"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"questions": {"type": "array", "items": question}},
        "required": ["questions"],
        "additionalProperties": False,
    }


def vote_schema(space: SystemSpec, n_steps: int | None, no_fault: bool = False) -> dict[str, Any]:
    """JSON schema of a vote: a set of hazard-space ids, plus the decisive step when ``n_steps``
    is given (an enum: Inspect drops ``minimum``/``maximum``), or null when ``no_fault`` admits the
    "no fault" vote (no id marked, step null)."""
    properties: dict[str, Any] = {"faulty": {"type": "array", "items": {"type": "string", "enum": space.ids}}}
    if n_steps is not None:
        step = {"type": "integer", "enum": list(range(n_steps))}
        properties["step"] = {"anyOf": [step, {"type": "null"}]} if no_fault else step
    properties["justification"] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def read_report(persona: str, output: ModelOutput) -> Report:
    """A report from a self-assessment answer: the JSON fields as text, else the text itself."""
    problem = output_problem(output)
    if problem:
        return Report(persona=persona, errors=[problem])
    data = extract_json_object(output.completion, "own_trajectory", "anomalies")
    if data is None or not isinstance(data.get("own_trajectory"), str) or not isinstance(data.get("anomalies"), list):
        return Report(persona=persona, text=bound_text(output.completion).strip())
    anomalies = "\n".join(f"- {a}" for a in data["anomalies"]) or "none found"
    return Report(persona=persona, text=f"Own trajectory: {data['own_trajectory']}\nAnomalies:\n{anomalies}")


def read_questions(
    output: ModelOutput, system: SystemSpec, peers: list[str], max_questions: int
) -> tuple[list[tuple[str, str]], list[str]]:
    """([(peer, question)], problems): distinct known peers, at most ``max_questions``, in order."""
    problem = output_problem(output)
    if problem:
        return [], [problem]
    data = extract_json_object(output.completion, "questions")
    raw = data.get("questions") if data is not None else None
    if not isinstance(raw, list):
        return [], [f"no 'questions' list in the answer: {output.completion[:200]!r}"]
    asked: list[tuple[str, str]] = []
    problems: list[str] = []
    for item in raw:
        peer = resolve_component(item.get("to"), system, peers) if isinstance(item, dict) else None
        question = item.get("question") if isinstance(item, dict) else None
        if peer is None or not isinstance(question, str) or not question.strip():
            problems.append(f"unusable question {item!r} (needs a peer among {peers} and a text)")
        elif peer in {p for p, _ in asked}:
            problems.append(f"second question to {peer} dropped")
        elif len(asked) == max_questions:
            problems.append(f"question to {peer} dropped: at most {max_questions} per round")
        else:
            asked.append((peer, question.strip()))
    return asked, problems


def read_vote(voter: str, output: ModelOutput, space: SystemSpec, n_steps: int | None, no_fault: bool = False) -> Vote:
    """A vote from its answer; invalid (with the reasons) if any part is unusable. With
    ``no_fault`` (unknown outcome), a vote marking no id needs no step (any step it gives is
    dropped): it is the valid "no fault" vote."""
    problem = output_problem(output)
    if problem:
        return Vote(voter=voter, valid=False, errors=[problem])
    answer, from_lines = final_answer(output.completion, FAULTY, ("faulty", "step", "justification"))
    faulty, _, errors = read_faulty(answer, from_lines, space)
    data = answer or {}
    step = None
    if n_steps is not None and not (no_fault and not faulty and not errors):
        step, step_error = parse_step(data.get("step"), n_steps)
        errors += [step_error] if step_error else []
    justification = str(data.get("justification") or "")
    return Vote(voter=voter, faulty=faulty, step=step, justification=justification, valid=not errors, errors=errors)
