"""What each protocol should cost on one sample: its sequential rounds R and BENCHMARK.md's calls
and log-characters formulas, evaluated on what the sample recorded (``bench.measure``'s
docstring, measurements 1 and 3); and the rounds a sample's model calls actually took."""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.event import ModelEvent

from bench.configs import AUDITOR_CONCURRENCY, BUDGET
from blame.render import render_log, render_prefix_blocks, render_steps
from blame.schema import Attribution, Trajectory
from solvers.online_auditor import STORE_KEY as AUDITOR_KEY
from solvers.propose_verify import STORE_KEY as PV_KEY
from solvers.step_by_step import searchable_steps


# --- 1. protocol rounds and observed waves ---------------------------------------------------


def protocol_rounds(config: str, a: Attribution, store: dict[str, Any]) -> int:
    """R: the sequential model rounds the protocol needs for this sample (``bench.measure``'s
    docstring)."""
    if config == "all_at_once":
        return a.calls
    if config.startswith("poirot"):
        rounds = int("hazard_space" in a.usage) + int("self_assessment" in a.usage) + int("vote" in a.usage)
        if "interrogation" in a.usage:
            asked = {e.round for e in a.exchanges}
            rounds += sum(1 + (r in asked) for r in range(1, int(a.settings["rounds"]) + 1))
        return rounds
    if config == "raffles":
        return sum(1 + (record["candidate"] is not None) for record in store["raffles_iterations"])
    if config == "auditor[par]":
        return math.ceil(a.calls / AUDITOR_CONCURRENCY)
    if config == "propose_verify":
        return 1 + int("verify" in a.usage)
    return a.calls  # step_by_step, binary_search, hybrid, tool_caller, auditor[seq]: one call per round


def observed_waves(events: list[ModelEvent]) -> int:
    """The longest chain of calls each starting after the previous one ended (greedy by end time,
    which is optimal for interval chains)."""
    waves, last_end = 0, None
    for e in sorted(events, key=lambda e: e.completed or e.timestamp):
        if last_end is None or e.timestamp >= last_end:
            waves, last_end = waves + 1, e.completed or e.timestamp
    return waves


# --- 3. calls and log characters from the formulas -------------------------------------------


def walk_length(searched: list[int], verdicts: list[dict[str, Any]]) -> int:
    """k, the 1-based position of the first flagged step among ``searched``; all of them if none."""
    flagged = next((v["step"] for v in verdicts if v["decisive"]), None)
    return searched.index(flagged) + 1 if flagged is not None else len(searched)


def log_chars(steps: list[Any]) -> int:
    return len(render_steps(steps, BUDGET).text)


def formula(config: str, t: Trajectory, a: Attribution, store: dict[str, Any]) -> tuple[int | None, int | None, str]:
    """(calls by the BENCHMARK.md formula, log characters sent by its formula, the formula) for
    one sample, evaluated on what the sample recorded. None where the card gives no formula."""
    steps = t.steps
    L = len(render_log(t, BUDGET).text)
    if config in ("all_at_once", "a2p"):
        return 1, L, "1; L"
    if config == "propose_verify":
        P, V = int(a.settings["proposers"]), int(a.settings["verifiers"])
        calls = P + V * len(a.candidates) * (not store[PV_KEY]["no_fault_majority"])
        return calls, calls * L, "P + V*c; L per call"
    if config.startswith("poirot"):
        A = len(t.system.agents)
        R = int(a.settings["rounds"])
        mode = a.settings["mode"]
        calls = {"C0": A, "C1": 2 * A, "C2": 2 * A}.get(str(mode), 2 * A + (R * A + len(a.exchanges) if A >= 2 else 0))
        return calls + int("hazard_space" in a.usage), None, "2A + R*A + sum Q_r"
    if config == "raffles":
        iterations = store["raffles_iterations"]
        calls = sum(1 + 3 * (r["candidate"] is not None) for r in iterations)
        return calls, calls * L, "sum_i (1 + 3u_i); L per call"
    if config == "step_by_step":
        asked = [v["step"] for v in store["step_by_step_verdicts"]]
        return (
            walk_length(searchable_steps(t), store["step_by_step_verdicts"]),
            sum(log_chars(steps[: i + 1]) for i in asked),
            "k (m if none flagged); sum of prefixes",
        )
    if config == "binary_search":
        rounds = store["binary_search_rounds"]
        m = len(searchable_steps(t))
        lo, hi = (math.floor(math.log2(m)), math.ceil(math.log2(m))) if m > 1 else (0, 0)
        calls = len(rounds) if lo <= len(rounds) <= hi else -1  # -1 flags a disagreement
        return (
            calls,
            sum(log_chars(steps[r["range"][0] : r["range"][1] + 1]) for r in rounds),
            "floor..ceil log2 m; segments",
        )
    if config == "hybrid":
        record = store["hybrid"]
        walked = [v["step"] for v in record["verdicts"]]
        return (
            1 + walk_length(record["searched"], record["verdicts"]),
            L + sum(log_chars(steps[: i + 1]) for i in walked),
            "1 + k_a; L + agent's prefixes",
        )
    if config == "tool_caller":
        judged = sum(1 for r in store["tool_caller"] if not r["refused"] and isinstance(r["step"], int) and 0 <= r["step"] < len(steps))
        planner = a.usage["planner"].calls if "planner" in a.usage else 0
        return planner + judged, None, "P + J (J <= 3 Judge calls)"
    if config.startswith("auditor"):
        detail = store[AUDITOR_KEY]
        blocks, _ = render_prefix_blocks(t, BUDGET)
        audited = detail["audited"]
        if config == "auditor[par]":
            calls = len(detail["schedule"])
        else:
            alarm = next((v.prefix_end for v in a.verdicts if v.valid and v.alarm), None)
            calls = detail["schedule"].index(alarm) + 1 if alarm is not None else len(detail["schedule"])
        return (
            calls,
            sum(len("\n\n".join(blocks[: k + 1])) for k in audited),
            "P or j; sum_k L(k)",
        )
    return None, None, ""
