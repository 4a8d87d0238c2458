"""Shared fixtures of the step-search, RAFFLES and floor tests: toy trajectories, a scripted
mockllm model (outputs carry usage, so nothing is downloaded) and eval helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Solver

import providers.offline_model  # noqa: F401  (registers the offline/... provider)
from blame.schema import (
    SYSTEM_SPEAKER,
    Attribution,
    Component,
    FaultLabel,
    Step,
    SystemSpec,
    Trajectory,
)
from blame.state import stored_attribution
from tasks._common import trajectory_to_sample
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading
from tasks.who_and_when import who_and_when

REASON = "GOLD-REASON-5519"
REFERENCE = "REFERENCE-ANSWER-7731"
YES = '{"reason": "this is it", "decisive_error": true}'
NO = '{"reason": "fine", "decisive_error": false}'

REAL_TASKS = {
    "who_and_when_ag": lambda: who_and_when(subset="algorithm_generated"),
    "who_and_when_hc": lambda: who_and_when(subset="hand_crafted"),
    "blame_cortex": blame_cortex,
    "blame_trading": blame_trading,
}


def step_trajectory() -> Trajectory:
    """Five steps: a framework message first, a tool result in the middle."""
    return Trajectory(
        id="toy-step",
        source="unit",
        label_kind="step",
        task="Add column A and column B of the sheet.",
        reference_answer=REFERENCE,
        system=SystemSpec(
            name="toy-step",
            components=[
                Component(id="calculator", name="Calculator", kind="software"),
                Component(id="planner", name="Planner", kind="agent"),
                Component(id="coder", name="Coder", kind="agent"),
            ],
        ),
        steps=[
            Step(index=0, agent=SYSTEM_SPEAKER, kind="system", content="Session started."),
            Step(index=1, agent="planner", kind="agent", recipient="coder", content="Sum columns A and B."),
            Step(index=2, agent="coder", kind="tool_call", tool_calls=["calculator"], content="add(A, C)"),
            Step(index=3, agent="calculator", kind="tool_result", content="17"),
            Step(index=4, agent="planner", kind="agent", content="FINAL ANSWER: 17"),
        ],
        label=FaultLabel(faulty=["coder"], step=2, agent="coder", reason=REASON),
    )


def vector_trajectory() -> Trajectory:
    return Trajectory(
        id="toy-vector",
        source="unit",
        label_kind="vector",
        task="Keep the tank at 20 degrees.",
        system=SystemSpec(
            name="toy-vector",
            components=[
                Component(id="sensor", name="Sensor", kind="hardware"),
                Component(id="controller", name="Controller", kind="agent"),
                Component(id="operator", name="Operator", kind="human"),
            ],
        ),
        steps=[
            Step(index=0, agent="sensor", kind="tool_result", content="temperature=95"),
            Step(index=1, agent=SYSTEM_SPEAKER, kind="system", content="Reading forwarded."),
            Step(index=2, agent="controller", kind="agent", content="Cooling requested."),
            Step(index=3, agent="operator", kind="human", content="Ignore it, heat up."),
        ],
        label=FaultLabel(faulty=["sensor"], reason=REASON),
    )


def with_usage(text: str) -> ModelOutput:
    """A mockllm output carrying usage (without it mockllm would download a tokenizer)."""
    output = ModelOutput.from_content(model="mockllm", content=text)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def answering(answer: Callable[[str, str], Any]) -> Model:
    """A mockllm model whose reply is ``answer(system prompt, last user turn)`` (sync or async)."""

    async def generate(input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        text = answer(input[0].text, input[-1].text)
        if hasattr(text, "__await__"):
            text = await text
        return with_usage(text)

    return get_model("mockllm/model", custom_outputs=generate)


def scripted(answers: list[str]) -> Model:
    """A mockllm model that answers ``answers`` in order (each output carries usage)."""
    return get_model("mockllm/model", custom_outputs=[with_usage(text) for text in answers])


def run_one(trajectory: Trajectory, solver: Solver, model: Model | str, tmp_path: Any, **kwargs: Any) -> EvalSample:
    """One in-process eval of ``solver`` on one trajectory; the sample with attachments resolved."""
    with_reference = kwargs.pop("with_reference_answer", False)
    task = Task(dataset=MemoryDataset([trajectory_to_sample(trajectory, with_reference)]), solver=solver)
    [log] = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path), **kwargs)
    assert log.status == "success", log.error
    assert log.samples is not None
    [sample] = log.samples
    assert sample.error is None
    return resolve_sample_attachments(sample, "full")


def saved(sample: EvalSample) -> Attribution:
    attribution = stored_attribution(sample.store)
    assert Attribution.model_validate_json(sample.output.completion) == attribution
    assert sum(u.calls for u in attribution.usage.values()) == attribution.calls
    return attribution


def prompts(sample: EvalSample) -> list[str]:
    """The user turn of every model call, checked to be the last message of the call."""
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    for event in events:
        assert event.input[-1].role == "user", "every call must end with a user turn"
    return [event.input[-1].text for event in events]


TASK_FILES = ["tasks/who_and_when.py", "tasks/blame_cortex.py", "tasks/blame_trading.py"]
"""Every task file; one ``inspect eval`` command runs them all (``-T subset=...`` reaches only
who_and_when)."""


def run_cli(extra: list[str], log_dir: Any, model: str = "offline/random", limit: int | None = 2,
            task_files: list[str] = TASK_FILES) -> dict[str, Any]:
    """``inspect eval <task files> --model <model> ...`` in a subprocess; its logs by task name."""
    import subprocess
    import sys
    from pathlib import Path

    from inspect_ai.log import list_eval_logs, read_eval_log

    repo = Path(__file__).resolve().parents[2]
    command = [str(Path(sys.executable).parent / "inspect"), "eval", *task_files, "--model", model,
               "--log-dir", str(log_dir), "--display", "none", *extra]
    if limit is not None:
        command += ["--limit", str(limit)]
    result = subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    logs = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        assert log.status == "success", log.error
        logs[log.eval.task] = log
    assert len(logs) == len(task_files)
    return logs
