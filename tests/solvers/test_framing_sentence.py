"""One framing sentence per framing for every method (``solvers._framing.SITUATION``).

Every method that calls a model runs on a step-labelled and a vector-labelled toy log, as a known
failure and under unknown outcome, with a scripted model that always finds a fault, so that every
phase of every protocol is reached (the Tool-Caller's Planner calls its tool, binary search passes
its gate, RAFFLES' candidate is evaluated, POIROT's personas question each other). Every model
call must carry the framing sentence of its (label kind, framing), and under unknown outcome no
system or user turn, nor a tool's description, may presuppose a failure.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from _toys import run_one, saved, step_trajectory, vector_trajectory, with_usage
from inspect_ai.event import ModelEvent
from inspect_ai.model import Model, ModelOutput, get_model

from blame.schema import Trajectory
from solvers import NO_MODEL, SOLVERS
from solvers._framing import SITUATION

METHODS = sorted(set(SOLVERS) - set(NO_MODEL))
TOYS = {"step": step_trajectory, "vector": vector_trajectory}
PRESUPPOSITIONS = (
    "the failure",
    "caused the failure",
    "the agent responsible",
    "responsible for the failure",
    "occurred",
    "went wrong",
    "session failed",
    "its decisive error",
    "failure analysis",
)
"""Phrases that presuppose a failure (or a hazard event): never in a prompt of unknown outcome."""
PHASES = {
    "binary_search": {"search"},
    "hybrid": {"judge", "step"},
    "poirot": {"self_assessment", "interrogation", "vote"},
    "propose_verify": {"propose", "verify"},
    "raffles": {"judge", "evaluator_fault", "evaluator_primacy", "evaluator_decisiveness"},
    "tool_caller": {"planner", "judge"},
}
"""Phases the scripted model must reach (on the step toy, where POIROT has two personas)."""


def finds_a_fault(kind: str) -> Model:
    """A mockllm model that names the toy's faulty agent at step 2 in the format of every question."""
    agent = "coder" if kind == "step" else "controller"
    named = {"reason": "the step reads the wrong input", "agent": agent, "step": 2, "faulty": [agent],
             **{f"{c}_rationale": "the log shows it" for c in ("fault", "primacy", "decisiveness")}}

    def answer(input: list[Any], tools: list[Any], config: Any) -> ModelOutput:
        user = input[-1].text
        if tools and not any(m.role == "tool" for m in input):
            return ModelOutput.for_tool_call("mockllm", "judge_step", {"step": 2, "suspicion": "wrong input"})
        if "Audit it now" in user:
            reply: dict[str, Any] = {"reason": "fine so far", "verdict": "continue", "step": None, "agent": None}
        elif "decisive_error" in user:
            reply = {"reason": "this is it", "decisive_error": True}
        elif "You are an evaluator" in user:
            reply = {"reason": "agreed", "satisfied": True, "confidence": 100}
        elif "error_exists" in user:
            reply = {"reason": "agreed", "error_exists": True, "substantive": True, "decisive": True,
                     "earliest": True, "confidence": 0.9}
        elif "Self-assessment." in user:
            reply = {"own_trajectory": "I did my part", "anomalies": ["step 2 reads column C"]}
        elif "Peer interrogation" in user:
            peers = config.response_schema.json_schema.properties["questions"].items.properties["to"].enum
            reply = {"questions": [{"to": peers[0], "question": "Which column did you read?"}]}
        elif "asks you" in user:
            return with_usage("I read column C at step 2.")
        elif "Private vote" in user:
            reply = {"faulty": [agent], "step": 2 if kind == "step" else None, "justification": "step 2"}
        else:
            reply = {**named, "abduction": "it read column C", "action": "read column B", "prediction": "17 becomes right"}
        return with_usage(json.dumps(reply))

    async def generate(input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
        output = answer(input, tools, config)
        output.usage = with_usage("").usage
        return output

    return get_model("mockllm/model", custom_outputs=generate)


def framed(kind: str, known: bool) -> Trajectory:
    return TOYS[kind]().model_copy(update={"outcome": "failed" if known else "unknown"})


def prompt_texts(event: ModelEvent) -> list[str]:
    """What the method wrote into one call: its system and user turns and its tools' descriptions."""
    texts = [m.text for m in event.input if m.role in ("system", "user")]
    for info in event.tools:
        texts += [info.description, *(p.description for p in info.parameters.properties.values())]
    return texts


@pytest.mark.parametrize("known", [True, False], ids=["known_failure", "unknown_outcome"])
@pytest.mark.parametrize("kind", sorted(TOYS))
@pytest.mark.parametrize("method", METHODS)
def test_every_call_carries_the_framing_sentence(method: str, kind: str, known: bool, tmp_path: Any) -> None:
    """Every call of every method carries ``SITUATION[kind, known]`` (and not the other framing's
    sentence); under unknown outcome no prompt holds a phrase of ``PRESUPPOSITIONS``."""
    sample = run_one(framed(kind, known), SOLVERS[method](), finds_a_fault(kind), tmp_path)
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert events
    if kind == "step":
        assert PHASES.get(method, set()) <= set(saved(sample).usage), "the script must reach every phase"
    for event in events:
        texts = prompt_texts(event)
        assert any(SITUATION[kind, known] in text for text in texts), f"{method}: a call without the framing sentence"
        assert not any(SITUATION[kind, not known] in text for text in texts)
        if not known:
            found = [p for p in PRESUPPOSITIONS for text in texts if re.search(re.escape(p), text, re.IGNORECASE)]
            assert not found, f"{method} presupposes a failure under unknown outcome: {found}"
