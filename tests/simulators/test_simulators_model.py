"""Model mode (``simulators.model_mode``, ``simulators.model_task``): every role a model call whose
prompt is built from its inputs only; the injected session replays its twin up to the injection;
unusable replies end the attempt with the reason; the coherence judge; and the Inspect task
through ``inspect eval`` with the offline model, exported from its logs."""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.arguments import ArgumentError
from blame.trajectory_folder import load_trajectory_folder
from simulators import generate, systems
from simulators.engine import System, TemplateBackend, first_difference, prepared_scenario, run_session
from simulators.dataset import card_text, generate_records, rejection, trajectory_record
from simulators.model_mode import TurnRequest, judge_problems, run_model_session
from simulators.model_task import ATTEMPTS_KEY, export_logs, leak, records_from_logs, simulate

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")
SYSTEMS = sorted(systems())
LEAK_WORDS = ("inject", "error vector", "hazard vector", "ground truth", "label", "fault", "twin", "sabotage",
              "decisive")


class Oracle:
    """A model that answers as the role's template would, and follows an instruction as its
    fault's template replacement does; it keeps every prompt it was sent."""

    def __init__(self, system: System) -> None:
        self.faults = {f.instruction: f for f in system.faults.values() if f.instruction}
        self.prompts: list[str] = []
        self.turns: list[int] = []

    async def __call__(self, request: TurnRequest) -> str:
        system_prompt, user = (m.text for m in request.messages)
        self.prompts += [system_prompt, user]
        self.turns.append(request.key[0])
        output = request.template
        for instruction, fault in self.faults.items():
            if instruction in system_prompt:
                output = fault.apply(request.inputs, output, random.Random(0))
        return json.dumps({name: output[name] for name in request.schema["properties"]})


def _kept_seed(system: System, fault: str) -> int:
    [record] = generate_records(system, 1, 5, faults=[fault], safe_share=0.0)[0]
    return int(record.meta["session_seed"])


@pytest.mark.parametrize("system_name,fault", [(s, f) for s in SYSTEMS for f in systems()[s].faults])
def test_a_model_following_its_instruction_gives_a_kept_session_that_replays_its_twin(system_name: str, fault: str) -> None:
    system = systems()[system_name]
    chosen = [system.faults[fault]]
    seed = _kept_seed(system, fault)
    scenario = prepared_scenario(system, seed, chosen)
    oracle = Oracle(system)
    twin = asyncio.run(run_model_session(system, scenario, seed, [], oracle))
    template_twin = run_session(system, scenario, seed, [], TemplateBackend())
    assert twin.problem is None and twin.run.session.steps == template_twin.session.steps
    oracle.turns.clear()
    injected = asyncio.run(run_model_session(system, scenario, seed, chosen, oracle, replay=twin.run.session))
    assert injected.problem is None
    run = injected.run
    assert rejection(system, chosen, run, twin.run, False) is None
    record = trajectory_record(system, 0, 5, seed, chosen, run, twin.run, None)
    assert leak(system, record) is None, "what the instruction makes the role say is no leak"
    first = first_difference(run.session.steps, twin.run.session.steps)
    assert run.session.steps[:first] == twin.run.session.steps[:first]
    if system.component_kind(system.faults[fault].component) == "agent":
        assert run.session.injections[fault][0] == first
    before = sum(1 for step in run.session.steps[:first] if step.kind == "agent")
    assert min(oracle.turns) >= before, "the turns before the injection are replayed, not asked again"
    ids = "|".join(re.escape(f) for f in system.faults)
    for prompt in oracle.prompts:
        assert not re.search(ids, prompt)
        assert not [w for w in LEAK_WORDS if re.search(rf"\b{re.escape(w)}", prompt, re.IGNORECASE)], prompt


@pytest.mark.parametrize("reply", ["not json", "{}", '{"text": ""}', "[1, 2]"])
def test_an_unusable_reply_ends_the_attempt_with_its_reason(reply: str) -> None:
    system = systems()["cortex"]

    async def ask(request: TurnRequest) -> str:
        return reply

    result = asyncio.run(run_model_session(system, prepared_scenario(system, 1, []), 1, [], ask))
    assert result.run is None and result.calls == 1
    assert result.problem.startswith("unusable reply (doctor): ")


def test_the_coherence_judge_verifies_only_an_all_coherent_verdict() -> None:
    assert judge_problems('{"all_turns_coherent": true, "reason": "fine"}') == []
    assert judge_problems('{"all_turns_coherent": false, "reason": "turn 9 ignores the alert"}') == [
        "coherence judge: not coherent (turn 9 ignores the alert)"]
    assert judge_problems("yes")[0].startswith("coherence judge: unusable reply")
    assert judge_problems('{"reason": "x"}') == ["coherence judge: unusable reply (no all_turns_coherent)"]


def test_model_mode_arguments_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match=r"^Invalid argument model=None: expected a model name with mode=model"):
        generate("cortex", 1, 0, tmp_path / "a", mode="model")
    with pytest.raises(ArgumentError, match=r"^Invalid argument mode='models': expected one of template, model\.$"):
        generate("cortex", 1, 0, tmp_path / "a", mode="models")
    with pytest.raises(ArgumentError, match=r"^Invalid argument model='offline/random': expected nothing in template"):
        generate("cortex", 1, 0, tmp_path / "a", model="offline/random")
    with pytest.raises(ArgumentError, match=r"^Unknown argument sesions for simulate: valid arguments are system, "):
        simulate("cortex", sesions=3)
    with pytest.raises(ArgumentError, match=r"^Invalid argument faults='EXO-Y': expected fault ids of cortex"):
        simulate("cortex", faults="EXO-Y")
    with pytest.raises(ArgumentError, match=r"^Invalid argument faults='EXO-X,EXO-X': expected each fault id once"):
        simulate("cortex", faults="EXO-X, EXO-X")
    with pytest.raises(ArgumentError, match=r"^Invalid argument max_attempts=0"):
        generate("cortex", 1, 0, tmp_path / "a", mode="model", model="offline/random", max_attempts=0)


@pytest.mark.e2e
@pytest.mark.parametrize("system_name", SYSTEMS)
def test_model_mode_runs_through_inspect_eval_and_exports_its_logs(system_name: str, tmp_path: Path) -> None:
    """Clean and injected sessions of the system (offline model, two attempts each): the log holds
    every attempt with its reason; the folder holds the kept ones and its card the others."""
    logs = tmp_path / "logs"
    command = [INSPECT, "eval", "simulators/model_task.py", "-T", f"system={system_name}", "-T", "sessions=6",
               "-T", "safe_share=0.4", "-T", "max_attempts=2", "--model", "offline/random", "--log-dir", str(logs),
               "--display", "none"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [log] = [read_eval_log(info) for info in list_eval_logs(str(logs))]
    assert log.status == "success" and {bool(s.metadata["faults"]) for s in log.samples} == {True, False}
    for sample in log.samples:
        attempts = sample.store[ATTEMPTS_KEY]
        assert attempts and all(a["kept"] or a["reason"] for a in attempts) and "session_checks" in sample.scores
    summary = export_logs(logs, tmp_path / "out")
    assert summary["mode"] == "model" and summary["model"] == "offline/random"
    assert summary["sessions"] + summary["not_kept"] == 6 and summary["model_calls"] > 0
    card = (tmp_path / "out" / "README.md").read_text()
    assert "mode `model`" in card and f"sessions not kept within 2 attempts (reported, not in the data): {summary['not_kept']}" in card
    records = load_trajectory_folder(tmp_path / "out") if summary["sessions"] else []
    for record in records:
        assert record.meta["mode"] == "model" and record.meta["model"] == "offline/random"
        assert (record.label is None) == (record.meta["faults"] == "")


def test_logs_of_two_generations_are_not_exported_together(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    logs = inspect_eval([simulate("trading", 1, seed) for seed in (0, 1)], model="offline/random", display="none",
                        log_dir=str(tmp_path / "logs"))
    with pytest.raises(ArgumentError, match=r"^Invalid argument logs=.*: expected logs of one generation"):
        export_logs(logs, tmp_path / "out")
    summary = export_logs(logs[:1], tmp_path / "one")
    assert summary["sessions"] + summary["not_kept"] == 1 and summary["seed"] == 0


def test_only_successful_logs_are_exported_and_every_requested_session_is_accounted_for(tmp_path: Path) -> None:
    """A log an interrupted run left ``started`` is refused with its status; a log that lacks a
    requested session lists it as not attempted (sessions kept + not kept = requested); logs of
    another model are not one generation."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import write_eval_log

    [log] = inspect_eval(simulate("trading", 3, 4, max_attempts=1), model="offline/random", display="none",
                         log_dir=str(tmp_path / "logs"))
    interrupted = log.model_copy(update={"status": "started", "samples": log.samples[:1], "location": ""})
    write_eval_log(interrupted, str(tmp_path / "killed" / "run.eval"))
    with pytest.raises(ArgumentError, match=r"^Invalid argument logs=.*expected logs of runs that succeeded \(this "
                       r"one has status started; complete it with inspect eval-retry, then export\)\.$"):
        export_logs(tmp_path / "killed", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    partial = log.model_copy(update={"samples": log.samples[1:]})
    _records, summary = records_from_logs([partial])
    assert summary["requested"] == 3 and summary["sessions"] + summary["not_kept"] == 3
    assert summary["not_kept_sessions"]["trading-4-00000"] == "not attempted"
    card = card_text(summary)
    assert '"requested": 3' in card and "'trading-4-00000': 'not attempted'" in card
    other = log.model_copy(update={"eval": log.eval.model_copy(update={"model": "offline/first"})})
    with pytest.raises(ArgumentError, match=r"expected logs of one generation"):
        records_from_logs([log, other])
