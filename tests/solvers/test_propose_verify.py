"""Tests for solvers/propose_verify.py: the admission rule, its tie-breaks, abstention, the two
concurrent waves and the per-call seeds.

The panel is a scripted mockllm model. Proposers all see the same prompt, so the script tells
them apart by their seed (``call_seed`` of their index); a verifier reads its candidate from the
prompt and its index from its seed.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from _toys import run_one, saved, step_trajectory, vector_trajectory, with_usage
from inspect_ai.event import SpanBeginEvent
from inspect_ai.model import GenerateConfig, Model, get_model

from blame.arguments import ArgumentError
from blame.schema import Candidate, Trajectory
from scorers.attribution import attribution_values
from scorers.vector import vector_values
from solvers.propose_verify import (
    STORE_KEY,
    call_seed,
    decide,
    distinct_candidates,
    majority,
    propose_verify,
    read_verdict,
)

Verdict = tuple[bool, float] | str
"""A verifier's scripted answer: (all four yes?, confidence), or raw text."""


def proposal(agent: str | None, step: int | None) -> str:
    return json.dumps({"reason": "because", "agent": agent, "step": step})


def verdict(yes: bool, confidence: float, no_at: str = "earliest") -> str:
    answers = {q: True for q in ("error_exists", "substantive", "decisive", "earliest")}
    if not yes:
        answers[no_at] = False
    return json.dumps({"reason": "checked", **answers, "confidence": confidence})


def panel(
    proposals: list[str],
    verifiers: Callable[[int, str, int], Verdict],
    n_verifiers: int = 3,
    latency: float = 0.0,
    calls: list[dict[str, Any]] | None = None,
) -> Model:
    """Proposer i answers ``proposals[i]``; a verifier of candidate (step, agent) with index j
    answers ``verifiers(step, agent, j)``. ``calls`` receives every call's phase, index, seed,
    temperature and start/end times."""
    propose_seeds = {call_seed(0, 1, "propose", i): i for i in range(len(proposals))}
    verify_seeds = {call_seed(0, 1, "verify", k): k for k in range(64)}

    async def generate(input: Any, tools: Any, tool_choice: Any, config: GenerateConfig) -> Any:
        start = time.monotonic()
        await anyio.sleep(latency)
        user = input[-1].text
        if "Another reviewer names this candidate" in user:
            step, agent = re.search(r"step (\d+), with (\S+) responsible", user).groups()
            phase, index = "verify", verify_seeds[config.seed]
            answer = verifiers(int(step), agent, index % n_verifiers)
            text = answer if isinstance(answer, str) else verdict(*answer)
        else:
            phase, index = "propose", propose_seeds[config.seed]
            text = proposals[index]
        if calls is not None:
            calls.append({"phase": phase, "index": index, "seed": config.seed, "temperature": config.temperature,
                          "start": start, "end": time.monotonic()})
        return with_usage(text)

    return get_model("mockllm/model", custom_outputs=generate)


def unknown(trajectory: Trajectory) -> Trajectory:
    return trajectory.model_copy(update={"outcome": "unknown"})


# --- the rule, on plain values -----------------------------------------------------------------


def test_the_admission_threshold_is_the_smallest_strict_majority() -> None:
    """floor(V/2) + 1: 1 of 1, 2 of 2, 2 of 3, 3 of 4, 3 of 5."""
    assert [majority(v) for v in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]


@pytest.mark.parametrize(("support", "admitted"), [(1, False), (2, False), (3, True), (4, True)])
def test_admission_exactly_above_the_majority(support: int, admitted: bool) -> None:
    """With V = 4, half the verifiers (2) is not enough; 3 is."""
    c = Candidate(step=1, agent="a", proposers=1, support=support, confidences=[0.5] * support)
    assert (decide([c], 4) is c) == admitted and c.admitted == admitted


def cand(step: int, support: int, confidences: list[float], proposers: int = 1, agent: str = "a") -> Candidate:
    return Candidate(step=step, agent=agent, proposers=proposers, support=support, confidences=confidences)


def test_tie_breaks_support_then_confidence_then_proposers_then_earliest_step() -> None:
    """Each rule decides only when the ones before it tie."""
    high_support = cand(5, 3, [0.5, 0.5, 0.5])
    confident = cand(1, 2, [1.0, 1.0], proposers=3)
    assert decide([confident, high_support], 3) is high_support
    sure, unsure = cand(5, 2, [0.9, 0.9]), cand(1, 2, [0.9, 0.6], proposers=3)
    assert decide([unsure, sure], 3) is sure
    more, fewer = cand(5, 2, [0.8, 0.8], proposers=2), cand(1, 2, [0.8, 0.8], proposers=1)
    assert decide([fewer, more], 3) is more
    late, early = cand(5, 2, [0.8, 0.8], agent="b"), cand(1, 2, [0.8, 0.8], agent="c")
    assert decide([late, early], 3) is early


def test_equal_pairs_are_one_candidate_counting_their_proposers() -> None:
    proposals = [{"kind": "candidate", "step": 2, "agent": "coder"}, {"kind": "unreadable", "errors": ["x"]},
                 {"kind": "candidate", "step": 1, "agent": "planner"}, {"kind": "candidate", "step": 2, "agent": "coder"}]
    found = distinct_candidates(proposals)
    assert [(c.step, c.agent, c.proposers) for c in found] == [(2, "coder", 2), (1, "planner", 1)]


def test_a_verifier_supports_only_with_four_readable_yes_and_a_confidence_in_range() -> None:
    assert read_verdict(verdict(True, 0.7))["supports"] is True
    assert read_verdict(verdict(False, 0.9, no_at="substantive"))["supports"] is False
    lines = "error_exists: yes\nsubstantive: yes\ndecisive: yes\nearliest: yes\nconfidence: 0.6"
    assert read_verdict(lines) | {"answers": None} == {"supports": True, "confidence": 0.6, "answers": None, "errors": []}
    for bad in (verdict(True, 1.5), verdict(True, -0.1), verdict(True, 0.5).replace("true", '"maybe"', 1), "garbage"):
        read = read_verdict(bad)
        assert read["supports"] is False and read["errors"], bad


def test_call_seeds_differ_by_call_and_epoch_and_are_reproducible() -> None:
    seeds = {call_seed(0, e, p, i) for e in (1, 2) for p in ("propose", "verify") for i in range(20)}
    assert len(seeds) == 80 and all(0 <= s < 2**31 for s in seeds)
    assert call_seed(0, 1, "propose", 0) == call_seed(0, 1, "propose", 0) != call_seed(1, 1, "propose", 0)


def test_options_are_checked_when_built() -> None:
    for bad in ({"proposers": 0}, {"verifiers": "three"}, {"temperature": -1}, {"seed": 1.5}, {"bogus": 1}):
        with pytest.raises(ArgumentError):
            propose_verify(**bad)


# --- the solver on a scripted panel ----------------------------------------------------------


def test_the_majority_candidate_wins_and_every_candidate_is_recorded(tmp_path) -> None:
    """Coder at step 2 (two proposers) gets 2 of 3 verifiers; planner at step 1 gets 1: coder is
    admitted and wins, planner is listed as rejected."""
    support = {(2, "coder"): 2, (1, "planner"): 1}
    model = panel([proposal("coder", 2), proposal("planner", 1), proposal("Coder", "step 2")],
                  lambda s, a, j: (j < support[(s, a)], 0.8))
    sample = run_one(step_trajectory(), propose_verify(), model, tmp_path)
    a = saved(sample)
    assert a.valid and not a.abstained
    assert (a.agent, a.step, a.faulty) == ("coder", 2, ["coder"])
    assert [(c.step, c.agent, c.proposers, c.support, c.confidences, c.admitted) for c in a.candidates] == [
        (2, "coder", 2, 2, [0.8, 0.8], True), (1, "planner", 1, 1, [0.8], False)]
    assert a.calls == 3 + 2 * 3 and a.usage["propose"].calls == 3 and a.usage["verify"].calls == 6
    assert len(sample.store[STORE_KEY]["verdicts"]) == 6


def test_confidence_breaks_a_support_tie(tmp_path) -> None:
    """Both candidates reach 2 of 3; planner's supporters are surer, so planner wins although coder
    had more proposers."""
    confidence = {(2, "coder"): 0.6, (1, "planner"): 0.9}
    model = panel([proposal("coder", 2), proposal("coder", 2), proposal("planner", 1)],
                  lambda s, a, j: (j < 2, confidence[(s, a)]))
    a = saved(run_one(step_trajectory(), propose_verify(), model, tmp_path))
    assert (a.agent, a.step) == ("planner", 1)


def test_nothing_admitted_on_a_known_failure_is_a_valid_abstention(tmp_path) -> None:
    model = panel([proposal("coder", 2), proposal("planner", 1), proposal("planner", 4)], lambda s, a, j: (j == 0, 0.9))
    a = saved(run_one(step_trajectory(), propose_verify(), model, tmp_path))
    assert a.valid and a.abstained and (a.agent, a.step, a.faulty) == (None, None, [])
    assert [c.support for c in a.candidates] == [1, 1, 1] and not any(c.admitted for c in a.candidates)
    assert "no verified fault" in a.reason


def test_nothing_admitted_under_unknown_outcome_is_no_fault_not_an_abstention(tmp_path) -> None:
    model = panel([proposal("coder", 2)] * 3, lambda s, a, j: (False, 0.1))
    a = saved(run_one(unknown(step_trajectory()), propose_verify(), model, tmp_path))
    assert a.valid and not a.abstained and (a.agent, a.step, a.faulty) == (None, None, [])


def test_every_proposer_unreadable_is_invalid(tmp_path) -> None:
    model = panel(["no idea", proposal("nobody", 2), proposal("coder", 99)], lambda s, a, j: (True, 1.0))
    a = saved(run_one(step_trajectory(), propose_verify(), model, tmp_path))
    assert not a.valid and len(a.errors) == 3 and a.calls == 3 and not a.candidates


def test_an_unreadable_proposer_among_readable_ones_is_left_out(tmp_path) -> None:
    model = panel(["no idea", proposal("coder", 2), "{}"], lambda s, a, j: (True, 0.7))
    a = saved(run_one(step_trajectory(), propose_verify(), model, tmp_path))
    assert a.valid and (a.agent, a.step) == ("coder", 2) and a.candidates[0].proposers == 1


def test_unreadable_verifiers_give_no_support(tmp_path) -> None:
    model = panel([proposal("coder", 2)] * 3, lambda s, a, j: "garbage" if j else (True, 0.9))
    a = saved(run_one(step_trajectory(), propose_verify(), model, tmp_path))
    assert a.valid and a.abstained and a.candidates[0].support == 1


@pytest.mark.parametrize(("no_faults", "verified"), [(2, False), (1, True)])
def test_a_no_fault_majority_of_proposers_is_the_answer_under_unknown_outcome(no_faults: int, verified: bool,
                                                                              tmp_path) -> None:
    """2 of 3 proposers answering "no fault" is the answer (nothing verified); 1 of 3 is not."""
    answers = [proposal(None, None)] * no_faults + [proposal("coder", 2)] * (3 - no_faults)
    a = saved(run_one(unknown(step_trajectory()), propose_verify(), panel(answers, lambda s, a, j: (True, 0.8)),
                      tmp_path))
    assert a.valid and not a.abstained
    assert ("verify" in a.usage) == verified
    assert (a.agent, a.step) == (("coder", 2) if verified else (None, None))


def test_no_fault_from_a_proposer_on_a_known_failure_is_unreadable(tmp_path) -> None:
    model = panel([proposal(None, None)] * 3, lambda s, a, j: (True, 0.8))
    assert not saved(run_one(step_trajectory(), propose_verify(), model, tmp_path)).valid


@pytest.mark.parametrize("make", [step_trajectory, vector_trajectory])
def test_a_panel_answering_from_the_gold_label_gives_the_gold_label(make: Callable[[], Trajectory],
                                                                     tmp_path) -> None:
    """Two proposers name the gold (step, agent) and one a wrong pair; verifiers support only the
    gold. On vector data the gold is the faulty sensor at its step 0."""
    trajectory = make()
    gold_agent = trajectory.label.agent or trajectory.label.faulty[0]
    gold_step = trajectory.label.step if trajectory.label.step is not None else 0
    wrong = next(s for s in trajectory.steps if s.agent != gold_agent and s.agent in trajectory.system.ids)
    model = panel([proposal(gold_agent, gold_step), proposal(wrong.agent, wrong.index), proposal(gold_agent, gold_step)],
                  lambda s, a, j: ((s, a) == (gold_step, gold_agent), 0.9))
    a = saved(run_one(trajectory, propose_verify(), model, tmp_path))
    assert (a.agent, a.step, a.faulty) == (gold_agent, gold_step, [gold_agent])
    if trajectory.label_kind == "step":
        assert attribution_values(a, trajectory)["joint"] == 1.0
    else:
        assert vector_values(a, trajectory)["exact"] == 1.0


def test_proposers_run_in_one_wave_then_verifiers_in_one_wave(tmp_path) -> None:
    """With 0.3 s per call: every proposer starts before any ends, every verifier starts after the
    last proposer ends and before any verifier ends (two waves, not P + V*c rounds)."""
    calls: list[dict[str, Any]] = []
    model = panel([proposal("coder", 2), proposal("planner", 1), proposal("coder", 2)], lambda s, a, j: (True, 0.5),
                  latency=0.3, calls=calls)
    started = time.monotonic()
    sample = run_one(step_trajectory(), propose_verify(), model, tmp_path)
    wall = time.monotonic() - started
    proposers = [c for c in calls if c["phase"] == "propose"]
    verifiers = [c for c in calls if c["phase"] == "verify"]
    assert len(proposers) == 3 and len(verifiers) == 6
    assert max(c["start"] for c in proposers) < min(c["end"] for c in proposers)
    assert min(c["start"] for c in verifiers) >= max(c["end"] for c in proposers)
    assert max(c["start"] for c in verifiers) < min(c["end"] for c in verifiers)
    assert wall < 0.6 + 2.0, wall
    spans = [e.name for e in sample.events if isinstance(e, SpanBeginEvent)]
    assert {"propose", "verify", "propose-0", "propose-2", "verify-5"} <= set(spans)


def test_every_call_has_its_own_seed_and_the_stated_temperature(tmp_path) -> None:
    """The option's temperature overrides the eval's (0 here); no two calls share a seed."""
    calls: list[dict[str, Any]] = []
    model = panel([proposal("coder", 2)] * 3, lambda s, a, j: (True, 0.5), calls=calls)
    run_one(step_trajectory(), propose_verify(temperature=0.4), model, tmp_path, temperature=0, seed=7)
    assert len(calls) == 6 and len({c["seed"] for c in calls}) == 6
    assert {c["temperature"] for c in calls} == {0.4}


def test_the_offline_model_gives_independent_proposers_distinct_answers(tmp_path) -> None:
    """Same prompt, different seeds: offline/random proposers do not all agree (no answer is served
    by prompt alone)."""
    a = saved(run_one(step_trajectory(), propose_verify(proposers=5, verifiers=1), "offline/random", tmp_path))
    assert len(a.candidates) > 1



@pytest.mark.parametrize("name", ["propose_verify", "a2p"])
def test_both_methods_run_on_aftraj_with_the_offline_model(name: str, tmp_path) -> None:
    """AFTraj (step labels, always of unknown outcome) on a two-row fixture in its documented format
    (``tests/blame/test_aftraj.py``): every sample ends with a usable or explained Attribution and is
    audited; "no fault" is a valid answer there."""
    import pandas as pd
    from inspect_ai import eval as inspect_eval

    from blame.aftraj import FILES
    from blame.state import stored_attribution, trajectory_from_metadata
    from solvers import solver_by_name
    from tasks.aftraj import aftraj

    def row(conv_id: str, turns: list[tuple[str, str]], step: int | None, agent: str | None) -> dict[str, Any]:
        return {"conv_id": conv_id, "domain": "math", "task": f"task {conv_id}", "gold_answer": "4",
                "num_turns": len(turns), "tools": [{"name": "compute", "description": "evaluate an expression"}],
                "turns": [{"role": r, "action": "", "content": c, "thought": ""} for r, c in turns],
                "mistake_step": step, "mistake_agent": agent, "mistake_reason": "wrong sum" if agent else None,
                "unsafe_source": "natural" if agent else None}

    turns = [("user", "What is 2+2?"), ("MathSolver", "It is 5."), ("Verifier", "Agreed: 5.")]
    folder = tmp_path / "aftraj"
    folder.mkdir()
    pd.DataFrame([row("s1", turns[:1] + [("MathSolver", "It is 4.")], -1, "")]).to_parquet(folder / FILES["safe"])
    pd.DataFrame([row("u1", turns, 1, "MathSolver")]).to_parquet(folder / FILES["unsafe"])
    [log] = inspect_eval(aftraj(data_dir=str(folder)), solver=solver_by_name(name), model="offline/mixed",
                         display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for sample in log.samples:
        attribution = stored_attribution(sample.store)
        trajectory = trajectory_from_metadata(sample.metadata)
        assert attribution.method == name and (attribution.valid or attribution.errors)
        assert not attribution.abstained  # unknown outcome: nothing admitted is "no fault"
        assert attribution.agent is None or attribution.agent in trajectory.system.ids
        assert "auditing" in sample.scores
