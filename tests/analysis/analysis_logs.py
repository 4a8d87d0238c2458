"""Eval logs for the analysis tests, made in-process with the offline model (fixtures: conftest.py).

Until POIROT lands, a stand-in solver (:func:`fake_poirot`) writes what POIROT will write: an
Attribution with ``method="poirot"``, one ``Vote`` per agent of the system, and per-agent
reasoning usage. Its votes and its consensus are planted from the label (a test fixture may
read it; a real solver never does), and its reasoning tokens are a known function of the case,
so the complexity and the tables built from these logs are predictable.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import Generate, Solver, TaskState, solver

from blame.schema import Attribution, PhaseUsage, Vote
from blame.state import save_attribution, trajectory_from_state
from solvers.all_at_once import all_at_once
from tasks.blame_cortex import blame_cortex
from tasks.who_and_when import who_and_when

MODELS = ["offline/first", "offline/random"]
EPOCHS = 2
WW_LIMIT = 4


def digest(*parts: object) -> int:
    """A stable integer from the parts (never Python's salted hash())."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def planted_tokens_per_agent(case: str) -> int:
    """The stand-in's reasoning tokens per agent for a case: 100, 200, ..., 800."""
    return 100 * (1 + digest("tokens", case) % 8)


def planted_consensus_correct(case: str) -> bool:
    return digest("consensus", case) % 2 == 0


@solver
def fake_poirot(mode: str = "full", weighting: str = "hamming") -> Solver:
    """Stand-in for POIROT: one vote per agent, consensus planted from the label."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trajectory = trajectory_from_state(state)
        ids = trajectory.system.ids
        gold = list(trajectory.label.faulty) if trajectory.label else []
        wrong = [ids[(ids.index(gold[0]) + 1) % len(ids)]] if gold else [ids[0]]
        case = str(state.sample_id)
        agents = [c.id for c in trajectory.system.agents]
        votes = []
        for voter in agents:
            right = digest("vote", case, voter, state.epoch) % 3 != 0
            votes.append(Vote(voter=voter, faulty=gold if right else wrong, weight=0.75 if right else 0.5,
                              valid=digest("valid", case, voter) % 10 != 0))
        per_agent = planted_tokens_per_agent(case)
        reported = str(state.model) == "offline/first"
        usage = PhaseUsage(
            calls=len(agents), input_tokens=1000 * len(agents), output_tokens=50 * len(agents),
            reasoning_tokens=per_agent * len(agents) if reported else 0,
            reasoning_tokens_estimated=0 if reported else per_agent * len(agents),
        )
        attribution = Attribution(
            method="poirot", faulty=gold if planted_consensus_correct(case) else wrong, votes=votes,
            calls=len(agents), usage={"vote": usage},
        )
        save_attribution(state, attribution)
        return state

    return solve


@solver
def exploding() -> Solver:
    """A solver that raises: its eval log ends with status 'error'."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        raise RuntimeError("planted failure")

    return solve


def make_logs(log_dir: Path, with_poirot: bool = True, with_failed: bool = True) -> Path:
    common = {"display": "none", "log_dir": str(log_dir)}
    inspect_eval(blame_cortex(), model=MODELS, solver=all_at_once(), epochs=EPOCHS, **common)
    if with_poirot:
        inspect_eval(blame_cortex(), model=MODELS, solver=fake_poirot(), epochs=EPOCHS, **common)
    inspect_eval(who_and_when(subset="hand_crafted"), model="offline/random", limit=WW_LIMIT, **common)
    if with_failed:
        inspect_eval(blame_cortex(), model="offline/random", solver=exploding(), limit=1, **common)
    return log_dir


def make_config_logs(log_dir: Path) -> Path:
    """Logs whose settings test configuration identity: the CORTEX baseline at
    ``--max-connections 4`` and ``per_dimension_metrics`` beside the stand-in POIROT at the
    defaults; and Who&When hand-crafted (8 cases) with and without the reference answer, both
    methods each."""
    common = {"display": "none", "log_dir": str(log_dir), "model": "offline/first"}
    inspect_eval(blame_cortex(per_dimension_metrics=True), solver=all_at_once(), max_connections=4, **common)
    inspect_eval(blame_cortex(), solver=fake_poirot(), **common)
    for reference in (False, True):
        task = who_and_when(subset="hand_crafted", with_reference_answer=reference)
        for method in (all_at_once(), fake_poirot()):
            inspect_eval(task, solver=method, limit=8, **common)
    return log_dir


def make_method_logs(log_dir: Path) -> Path:
    """Three methods (the judge, the stand-in POIROT, the most-frequent-sender floor) on three
    benchmarks (6 cases each of CORTEX, TradingAgents and Who&When hand-crafted), one offline model."""
    from solvers.floors import floor_most_frequent
    from tasks.blame_trading import blame_trading

    common = {"display": "none", "log_dir": str(log_dir), "model": "offline/first"}
    for task in (blame_cortex(), blame_trading(), who_and_when(subset="hand_crafted")):
        for method in (all_at_once(), fake_poirot(), floor_most_frequent()):
            inspect_eval(task, solver=method, limit=6, **common)
    return log_dir


def raw_records(logs: Path) -> list[dict]:
    """One record per sample-epoch straight from the logs: method, labels and the prediction."""
    from inspect_ai.log import read_eval_log

    from blame.state import stored_attribution, trajectory_from_metadata

    records = []
    for path in sorted(logs.glob("*.eval")):
        log = read_eval_log(str(path))
        safe_task = bool(log.eval.task_args.get("safe_controls"))
        for sample in log.samples:
            attribution = stored_attribution(sample.store).model_dump(mode="json")
            trajectory = trajectory_from_metadata(sample.metadata).model_dump(mode="json")
            ids = {c["id"] for c in trajectory["system"]["components"]}
            step, agent = attribution.get("step"), attribution.get("agent")
            usable = (bool(attribution.get("valid", True)) and (agent is None or agent in ids)
                      and (step is None or 0 <= step < len(trajectory["steps"])))
            records.append({"safe_task": safe_task, "method": attribution["method"], "case": str(sample.id),
                            "model": log.eval.model, "source": trajectory["source"], "metadata": sample.metadata,
                            "label": trajectory["label"], "n_steps": len(trajectory["steps"]),
                            "usable": usable, "step": step, "agent": agent})
    return records


def auditing_by_hand(records: list[dict]) -> dict[str, float]:
    """AgentForesight's definitions, written out again: gt = -1 for a safe control; pred = -1 for a
    usable answer without a step ("no fault"), an unusable answer is a wrong alarm."""
    tp = fp = fn = false_alarm = safe = unsafe = shifted = shift = hit = named = 0
    for r in records:
        gt = -1 if r["label"] is None else r["label"]["step"]
        pred = None if not r["usable"] else (-1 if r["step"] is None else r["step"])
        safe += gt == -1
        unsafe += gt != -1
        alarm = pred != -1
        tp += gt != -1 and pred == gt
        fp += alarm and pred != gt
        fn += gt != -1 and pred != gt
        false_alarm += gt == -1 and alarm
        if gt != -1 and pred is not None and pred != -1:
            shifted += 1
            shift += abs(pred - gt)
        if gt != -1 and r["label"].get("agent"):
            named += 1
            hit += r["usable"] and r["agent"] == r["label"]["agent"]
    return {"exact_f1": 2 * tp / (2 * tp + fp + fn), "precision": tp / (tp + fp) if tp + fp else np.nan,
            "recall": tp / (tp + fn), "ass": shift / shifted if shifted else np.nan, "far": false_alarm / safe,
            "step_acc": tp / unsafe, "agent_acc": hit / named}
