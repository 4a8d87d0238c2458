"""The simulators' labelled sessions by construction, for every system:
same seed -> byte-identical folder; for every fault id each kept session flags its component and
nothing else, its check passes on it and fails on its clean twin, and the twin equals it step by
step before the first difference; a step label only on a session that failed (decisive = the two
outcomes differ); combinations are the OR of their parts; hard negatives are zero vectors whose symptom showed; nothing a method reads names the
fault, the injection or the label; bad arguments are one line."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

import pytest

from blame.arguments import ArgumentError
from blame.render import render_log, render_system, render_task
from blame.schema import Trajectory
from blame.trajectory_folder import load_trajectory_folder
from simulators import generate, systems
from simulators.engine import System, TemplateBackend, first_difference, prepared_scenario, run_session
from simulators.dataset import default_pool, generate_records, plan_session, rejection, trajectory_record

SYSTEMS = sorted(systems())
PER_FAULT = 3
LEAK_WORDS = ("inject", "error vector", "hazard vector", "ground truth", "label", "fault", "twin", "sabotage",
              "decisive")


@cache
def _records(system: str, fault: str) -> tuple[Trajectory, ...]:
    records, _ = generate_records(systems()[system], PER_FAULT, 11, faults=[fault], safe_share=0.0)
    return tuple(records)


def _replay(system: System, record: Trajectory):
    """The kept session and its clean twin, re-run from the seed the record keeps."""
    seed = int(record.meta["session_seed"])
    faults = [system.faults[name] for name in record.label.fault_names] if record.label else []
    negative = system.hard_negatives.get(str(record.meta["hard_negative"]))
    scenario = prepared_scenario(system, seed, faults, negative)
    backend = TemplateBackend()
    return run_session(system, scenario, seed, faults, backend), run_session(system, scenario, seed, [], backend)


def _cases() -> list[tuple[str, str]]:
    return [(name, fault) for name in SYSTEMS for fault in systems()[name].faults]


@pytest.mark.parametrize(("system_name", "fault_id"), _cases())
def test_every_fault_flags_its_component_shows_and_replays(system_name: str, fault_id: str) -> None:
    system = systems()[system_name]
    fault = system.faults[fault_id]
    agent_fault = system.component_kind(fault.component) == "agent"
    for record in _records(system_name, fault_id):
        assert record.label.faulty == [fault.component] and record.label.fault_names == [fault_id]
        assert record.vector == system.spec.vector([fault.component])
        run, twin = _replay(system, record)
        assert run.session.steps == record.steps
        assert fault.check(run.session) and not fault.check(twin.session)
        assert record.meta["decisive"] == (run.failed != twin.failed)
        assert record.meta["outcome"] == ("failure" if run.failed else "success") and not twin.failed
        assert record.outcome == ("failed" if run.failed else "succeeded")
        first = first_difference(run.session.steps, twin.session.steps)
        assert first is not None and first == record.meta["first_difference"]
        if agent_fault and run.failed:
            assert (record.label.agent, record.label.step) == (fault.component, first)
            assert [(f.agent, f.step, f.category) for f in record.label.failures] == [(fault.component, first, fault_id)]
            assert record.steps[first].agent == fault.component
        else:
            assert record.label.step is None and record.label.agent is None and record.label.failures == []
        assert twin.session.steps[:first] == record.steps[:first]


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_combinations_are_the_or_of_their_parts(system_name: str) -> None:
    system = systems()[system_name]
    records, summary = generate_records(system, 12, 4, max_faults=3, safe_share=0.0)
    assert summary["by_vector_size"].keys() - {1, 2, 3} == set() and max(summary["by_vector_size"]) > 1
    for record in records:
        faults = [system.faults[name] for name in record.label.fault_names]
        assert record.label.faulty == [c for c in system.spec.ids if c in {f.component for f in faults}]
        agent_steps = [f.step for f in record.label.failures]
        assert agent_steps == sorted(agent_steps)
        if record.label.step is not None:
            assert record.label.step == agent_steps[0] >= record.meta["first_difference"]
        run, twin = _replay(system, record)
        assert all(f.check(run.session) and not f.check(twin.session) for f in faults)


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_safe_runs_and_hard_negatives_are_zero_vectors_that_pass_the_checks(system_name: str) -> None:
    system = systems()[system_name]
    records, summary = generate_records(system, 10, 6, safe_share=1.0)
    assert summary["safe"] == 10 and (not system.hard_negatives or summary["hard_negatives"])
    for record in records:
        assert record.label is None and record.vector == [0] * len(system.spec.ids)
        assert record.meta["outcome"] == "success" and record.outcome == "succeeded" and record.safe
        run, _ = _replay(system, record)
        negative = system.hard_negatives.get(str(record.meta["hard_negative"]))
        assert run.session.steps == record.steps and not run.failed and not run.session.invalid_tool_calls
        assert negative is None or negative.check(run.session)


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_nothing_a_method_reads_names_the_fault_or_the_label(system_name: str) -> None:
    system = systems()[system_name]
    records = [r for fault in system.faults for r in _records(system_name, fault)]
    records += generate_records(system, 6, 6, safe_share=1.0)[0]
    ids = [f.lower() for f in system.faults]
    for record in records:
        view = record.model_view()
        text = "\n".join([render_system(view.system), render_log(view).text, render_task(view), view.id]).lower()
        found = [w for w in (*ids, *LEAK_WORDS) if re.search(rf"\b{re.escape(w)}", text)]
        assert found == [], f"{record.id}: {found}"


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_the_same_seed_gives_the_same_folder_and_it_loads(system_name: str, tmp_path: Path) -> None:
    calls = []
    first = generate(system_name, 8, 3, tmp_path / "a", max_faults=2, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, 8) for i in range(1, 9)]
    generate(system_name, 8, 3, tmp_path / "b", max_faults=2)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    generate(system_name, 8, 4, tmp_path / "c", max_faults=2)
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")
    loaded = load_trajectory_folder(tmp_path / "a")
    assert len(loaded) == first["sessions"] == 8 and {t.source for t in loaded} == {f"generated/{system_name}"}
    card = (tmp_path / "a" / "README.md").read_text(encoding="utf-8")
    assert "simulators 5" in card and f"`{system_name}`" in card and "regenerations:" in card


def test_decisive_only_keeps_failures_only() -> None:
    """A guardian who hides only a bad night changes the intake's text but no plan: kept as a vector
    bit, refused with decisive_only."""
    system = systems()["cortex"]
    records, _ = generate_records(system, 12, 2, faults=["GUA-X"], safe_share=0.0)
    quiet = next(r for r in records if r.meta["decisive"] is False)
    run, twin = _replay(system, quiet)
    assert rejection(system, [system.faults["GUA-X"]], run, twin, decisive_only=True) == "not decisive"
    assert rejection(system, [system.faults["GUA-X"]], run, twin, decisive_only=False) is None
    records, _ = generate_records(system, 3, 2, faults=["EXO-X", "CR-X"], safe_share=0.0, decisive_only=True)
    assert all(r.meta["decisive"] and r.meta["outcome"] == "failure" for r in records)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"system": "nope"}, r"^Invalid argument system='nope': expected one of cortex"),
    ({"sessions": 0}, r"^Invalid argument sessions=0: expected a whole number of sessions from 1 to 20,000 "
     r"\(more: several folders with different seeds\)\.$"),
    ({"faults": ["EXO-X", "BOGUS"]}, r"^Invalid argument faults='EXO-X,BOGUS': expected fault ids of cortex: EXO-X, "),
    ({"max_faults": 0}, r"^Invalid argument max_faults=0: expected a whole number from 1 to \d+ \(the most of these"),
    ({"faults": ["PT-X", "COMM-X"], "max_faults": 2}, r"^Invalid argument max_faults=2: expected a whole number from 1 "
     r"to 1 \(the most of these faults that can show in one session\)\.$"),
    ({"safe_share": 1.5}, r"^Invalid argument safe_share=1\.5: expected a share from 0 to 1\.$"),
])
def test_bad_arguments_are_one_line(arguments: dict, message: str, tmp_path: Path) -> None:
    call = {"system": "cortex", "sessions": 2, "seed": 0, "out": tmp_path / "out", **arguments}
    with pytest.raises(ArgumentError, match=message):
        generate(**call)
    assert not (tmp_path / "out").exists()


def test_a_folder_in_use_is_refused(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ArgumentError, match=r"^Invalid argument out='.*full': expected a new or empty folder\.$"):
        generate("cortex", 2, 0, tmp_path / "full")


def test_blames_largest_combination_is_made() -> None:
    """BLAME's CORTEX case 100 holds five faults at once (every component but the child and the
    channels); within a few attempts a session shows all five and is kept with that vector."""
    system = systems()["cortex"]
    five = [system.faults[f] for f in ("EXO-X", "GUA-X", "DD-X", "PT-X", "CR-X")]
    kept = None
    for seed in range(60):
        scenario = prepared_scenario(system, seed, five)
        twin = run_session(system, scenario, seed, [], TemplateBackend())
        run = run_session(system, scenario, seed, five, TemplateBackend())
        if rejection(system, five, run, twin, decisive_only=True) is None:
            kept = trajectory_record(system, 0, 0, seed, five, run, twin, None)
            break
    assert kept is not None and kept.vector == [1, 1, 1, 1, 0, 1, 0]
    with pytest.raises(ArgumentError, match=r"max_faults=6: expected a whole number from 1 to 5 "):
        generate("cortex", 2, 0, "unused", faults=[f.id for f in five] + ["COMM-X"], max_faults=6)


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_no_floor_beats_the_most_frequent_vector(system_name: str) -> None:
    """Counting speakers tells nothing the base rate does not (no floor's exact-vector
    accuracy more than 5 points above the most frequent vector's share): the most frequent
    sender, the first agent and the speaker of step 1, each as the predicted faulty set."""
    from collections import Counter

    from solvers.floors import most_frequent_sender

    system = systems()[system_name]
    records, _ = generate_records(system, 120, 5, max_faults=2)
    base = Counter(tuple(r.vector) for r in records).most_common(1)[0][1] / len(records)
    first_agent = system.spec.agents[0].id
    rules = {"most_frequent": lambda t: most_frequent_sender(t), "fixed_agent": lambda t: first_agent,
             "fixed_step": lambda t: next(s.agent for s in t.steps[1:] if s.agent != "system")}
    for name, rule in rules.items():
        exact = sum((r.label.faulty if r.label else []) == [rule(r.model_view())] for r in records) / len(records)
        assert exact <= base + 0.05, (name, exact, base)


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_a_gold_answer_is_perfect(system_name: str) -> None:
    """The label's own answer scores exact on the vector, and on agent faults hits the step and
    agent and a listed failure (non-agent faults carry no step, as documented)."""
    from blame.schema import Attribution
    from scorers.attribution import attribution_values
    from scorers.listed_failures import listed_failure_values
    from scorers.vector import vector_values

    records, _ = generate_records(systems()[system_name], 40, 8, max_faults=2)
    for record in records:
        label = record.label
        gold = Attribution(method="gold", faulty=label.faulty if label else [], agent=label.agent if label else None,
                           step=label.step if label else None)
        assert vector_values(gold, record)["exact"] == 1.0
        if label is not None and label.step is not None:
            assert attribution_values(gold, record)["joint"] == 1.0
            assert listed_failure_values(gold, record)["any_joint"] == 1.0


def test_the_two_systems_draw_independent_streams() -> None:
    """The plan stream is keyed by the system: over sessions 0-199 of seed 0 the two systems' safe
    or faulty status agrees 125 times, the 0.25^2 + 0.75^2 = 62.5% two independent draws give
    (keyed by seed and index only, it agreed 200 times of 200)."""
    cortex, trading = systems()["cortex"], systems()["trading"]

    def safe(system: System, index: int) -> bool:
        return not plan_session(system, default_pool(system), 0, index, 1, 0.25)[1]

    assert sum(safe(cortex, i) == safe(trading, i) for i in range(200)) == 125
