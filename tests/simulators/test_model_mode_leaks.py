"""Model mode never keeps a session whose model-written text gives its fault away.

A faulty role's prompt holds its fault's instruction ("In this session: ..."). A chatty model
repeats it, an obedient one announces it; either way the words would reach every method that
reads the folder. ``simulators.model_task.leak`` checks every string of a record's model view
(after NFKC, case folding, format characters dropped, dashes unified, whitespace collapsed) for a
fault id, the prompt's lead-in, the template tests' leak words and runs of 6 words of an
instruction; the solver regenerates such an attempt and counts it. Faithful content (what the
fault makes the role say) stays allowed.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
import simulators.model_task as model_task
from blame.schema import Step, Trajectory
from blame.trajectory_folder import load_trajectory_folder
from simulators import systems
from simulators.dataset import export, generate_records
from simulators.model_mode import TurnRequest
from simulators.model_task import leak, records_from_logs, simulate
from tasks.trajectories import trajectories

TRADING = systems()["trading"]
AGENT_FAULT, DATA_FAULT = "News-X", "Feed-X"


def _template_record(fault: str = AGENT_FAULT) -> Trajectory:
    [record], _ = generate_records(TRADING, 1, 3, faults=[fault], safe_share=0.0)
    return record


def _with_text(record: Trajectory, text: str) -> Trajectory:
    """``record`` with ``text`` added to its last agent step's content."""
    steps = list(record.steps)
    last = max(i for i, step in enumerate(steps) if step.kind == "agent")
    steps[last] = Step.model_validate({**steps[last].model_dump(), "content": f"{steps[last].content} {text}"})
    return record.model_copy(update={"steps": steps})


@pytest.mark.parametrize(("text", "found"), [
    ("As told: Report an accounting probe and the CFO's resignation.", "6 words of News-X's instruction"),
    ("ＲＥＰＯＲＴ ＡＮ ＡＣＣＯＵＮＴＩＮＧ ＰＲＯＢＥ ＡＮＤ ＴＨＥ", "6 words of News-X's instruction"),
    ("report\u200b an   accounting\nprobe, and\u00a0the CFO", "6 words of News-X's instruction"),
    ("calls every bullish reading bearish and every", "6 words of Market-X's instruction"),
    ("in this session : be thorough", "repeats 'In this session:'"),
    ("IN THIS SESSION\uff1a be thorough", "repeats 'In this session:'"),
    ("see NEWS\u2011X", "names News-X"),
    ("the in\u200bjected story", "the word 'inject'"),
    ("Ground\u00a0\u00a0Truth says so", "the word 'ground truth'"),
    ("a hazard-vector of ones", "the word 'hazard vector'"),
    ("compare with the TWIN run", "the word 'twin'"),
])
def test_a_leak_is_found_in_any_spelling(text: str, found: str) -> None:
    reason = leak(TRADING, _with_text(_template_record(), text))
    assert reason is not None and reason.startswith("model text gives the fault away (") and found in reason, reason


@pytest.mark.parametrize("text", [
    "Breaking: an accounting probe was opened and the CFO resigned.",  # what News-X makes the analyst say
    "In this session the market opened flat.",  # the words without the prompt's colon
    "Report an accounting probe and",  # 5 words of the instruction
])
def test_faithful_content_stays_allowed(text: str) -> None:
    assert leak(TRADING, _with_text(_template_record(), text)) is None


@pytest.mark.parametrize("system_name", sorted(systems()))
def test_every_template_session_passes_the_check(system_name: str) -> None:
    """The role templates carry out every fault without giving it away, so the check refuses none
    of them: it tells a repeated instruction from the content the instruction asks for."""
    system = systems()[system_name]
    records = [r for fault in system.faults for r in generate_records(system, 2, 4, faults=[fault], safe_share=0.0)[0]]
    records += generate_records(system, 3, 4, safe_share=1.0)[0]
    assert [(r.id, leak(system, r)) for r in records if leak(system, r)] == []


def _instruction_of(system_prompt: str) -> str | None:
    return system_prompt.split(" In this session: ", 1)[1] if " In this session: " in system_prompt else None


class ScriptedModel:
    """Answers each turn as the role's template would, and carries out an instruction as the
    fault's template replacement does (what a capable model told to misbehave writes); ``style``
    then adds what a chatty model adds: ``echo`` repeats its whole system prompt, ``obedient``
    announces the instruction it follows, ``silent`` adds nothing."""

    def __init__(self, style: str) -> None:
        self.style = style
        self.faults = {f.instruction: f for f in TRADING.faults.values() if f.instruction}

    async def __call__(self, request: TurnRequest) -> str:
        system_prompt = request.messages[0].text
        output = dict(request.template)
        instruction = _instruction_of(system_prompt)
        if instruction is not None:
            output = self.faults[instruction].apply(request.inputs, output, random.Random(0))
            added = {"echo": system_prompt, "obedient": f"(As instructed: {instruction.lower()})"}.get(self.style)
            output["text"] = f"{output['text']} {added}" if added else output["text"]
        return json.dumps({name: output[name] for name in request.schema["properties"]})


def _prompts(log: EvalLog) -> list[str]:
    """Every message text every model call of the log was sent."""
    texts = []
    for sample in log.samples or []:
        for event in sample.events:
            if event.event == "model":
                texts += [message.text for message in event.input]
    return texts


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def _holds_instruction(text: str) -> str | None:
    words = " ".join(_words(text))
    for fault in TRADING.faults.values():
        said = _words(fault.instruction)
        for i in range(len(said) - 5):
            if re.search(rf"\b{' '.join(said[i:i + 6])}\b", words):
                return fault.id
    if "in this session:" in text.casefold() or any(re.search(rf"\b{re.escape(f.casefold())}\b", text.casefold())
                                                    for f in TRADING.faults):
        return "a fault id or the prompt's lead-in"
    return None


@pytest.mark.parametrize("style", ["echo", "obedient"])
def test_a_chatty_model_leaks_nothing_into_kept_sessions_or_method_prompts(style: str, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Trading sessions with an agent fault (its role gets an instruction) or a data-feed fault (no
    role does), the model echoing or announcing its instruction: every attempt that repeats it is
    regenerated and counted, so the agent-fault sessions are not kept (reported) and the data-feed
    ones are; no kept step and no prompt of all_at_once or POIROT on the folder holds an
    instruction, a fault id or the prompt's lead-in."""
    scripted = ScriptedModel(style)

    async def coherent(session) -> list[str]:
        return []

    monkeypatch.setattr(model_task, "_ask", scripted)
    monkeypatch.setattr(model_task, "_judge", coherent)
    task = simulate("trading", sessions=6, seed=2, faults=f"{AGENT_FAULT},{DATA_FAULT}", safe_share=0.0,
                    max_attempts=2)
    [log] = inspect_eval(task, model="offline/random", display="none", log_dir=str(tmp_path / "gen"))
    assert log.status == "success"
    records, summary = records_from_logs([log])
    planned = {str(s.id): s.metadata["faults"] for s in log.samples}
    told = sorted(sid for sid, faults in planned.items() if faults == [AGENT_FAULT])
    assert told and len(told) < 6, planned
    assert sorted(summary["not_kept_sessions"]) == told
    # Since generator 4 News-X's check reads the stance off the served headlines' tones, which the
    # scripted replacement does not always match: such an attempt is refused by the check first.
    refusals = ("model text gives the fault away", f"{AGENT_FAULT}: check failed")
    assert all(reason.startswith(refusals) for reason in summary["not_kept_sessions"].values()), summary
    reasons = summary["regeneration_reasons"]
    assert reasons["model text gives the fault away"] >= 1
    assert sum(reasons.get(r, 0) for r in refusals) == 2 * len(told), reasons
    assert sorted(r.id for r in records) == sorted(set(planned) - set(told))
    for record in records:
        assert [s.index for s in record.steps if _holds_instruction(s.content or "")] == []

    folder = tmp_path / "generated"
    export(TRADING, records, summary, folder)
    assert len(load_trajectory_folder(folder)) == len(records)
    for solver in ("all_at_once", "poirot"):
        [run] = inspect_eval(trajectories(data_dir=str(folder), solver=solver), model="offline/random", display="none",
                             log_dir=str(tmp_path / solver))
        assert run.status == "success" and len(run.samples) == len(records)
        prompts = _prompts(run)
        assert prompts and [p[:80] for p in prompts if _holds_instruction(p)] == []
        assert not any(re.search(rf"\b{re.escape(word)}", p.casefold()) for p in prompts for word in ("inject", "twin"))


def test_the_check_is_what_refuses_the_sessions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The same sessions with a model that only carries out its instruction are all kept: the
    refusals above come from the repeated instruction, not from what the fault makes the role do."""

    async def coherent(session) -> list[str]:
        return []

    monkeypatch.setattr(model_task, "_ask", ScriptedModel("silent"))
    monkeypatch.setattr(model_task, "_judge", coherent)
    task = simulate("trading", sessions=6, seed=2, faults=f"{AGENT_FAULT},{DATA_FAULT}", safe_share=0.0,
                    max_attempts=2)
    [log] = inspect_eval(task, model="offline/random", display="none", log_dir=str(tmp_path / "gen"))
    records, summary = records_from_logs([log])
    assert summary["not_kept"] == 0 and len(records) == 6
    assert "model text gives the fault away" not in summary["regeneration_reasons"]
    assert {name for r in records for name in r.label.fault_names} == {AGENT_FAULT, DATA_FAULT}
