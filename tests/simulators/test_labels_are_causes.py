"""Generated labels are causes of failures, recomputed here through the engine (not through
``simulators.causes``) on 300 sessions per system (``conftest.wide``: every fault drawn, up to
two per session, a quarter safe): no step label on a session that did not fail; in a failed
multi-fault session the step label is a but-for cause's earliest agent step, never a non-cause's
when another fault is one; over-determined failures are flagged and labelled from their minimal
sufficient sets; removing any fault changes the log's text; labels say ``constructed``; each
faulty session's clean twin is exported; the folder, written as ``blame generate`` writes it,
meets the targets of its self-audit (``simulators.audit``: each shortcut at most 70% and at most
25 points above the majority, the prefix's words at most 5 points above its shape, the clean twin
at most 5 above the majority, the positive control at least 95%) and its card's validity section
equals the audit recomputed from disk. Also: faults that never decide the outcome are out of the
default draw and refused with ``decisive_only``; ``mix="blame"`` draws BLAME's fault sets. The
1,000-session figures of every option set are in ``results/generated_audit.md``."""

from __future__ import annotations

from itertools import combinations

import pytest

from blame.arguments import ArgumentError
from blame.schema import Trajectory
from simulators import generate, systems
from simulators.audit_report import validity_section, verdicts
from simulators.dataset import audit_folder, card_text, default_pool, export
from simulators.engine import Run, System, TemplateBackend, prepared_scenario, run_session
from tests.simulators.conftest import generated

SYSTEMS = sorted(systems())


def _rerun(system: System, record: Trajectory, keep: set[str]) -> Run:
    """The record's session re-run with only the faults in ``keep`` (same scenario and seeds)."""
    seed = int(record.meta["session_seed"])
    faults = [system.faults[name] for name in record.label.fault_names]
    scenario = prepared_scenario(system, seed, faults)
    return run_session(system, scenario, seed, [f for f in faults if f.id in keep], TemplateBackend())


def _text(run: Run) -> list[tuple[str, str, str]]:
    return [(s.agent, s.kind, s.content) for s in run.session.steps]


def _agent_step(system: System, run: Run, causes: set[str]) -> int | None:
    steps = [run.session.injections[f][0] for f in causes
             if system.component_kind(system.faults[f].component) == "agent"]
    return min(steps) if steps else None


@pytest.mark.parametrize("name", SYSTEMS)
def test_no_step_label_on_a_session_that_did_not_fail(name: str, wide) -> None:
    system = systems()[name]
    records, _, summary = wide[name]
    faulty = [r for r in records if r.label is not None]
    for record in faulty:
        if record.label.step is not None:
            assert record.outcome == "failed" and record.meta["twin_outcome"] == "success", record.id
        if record.outcome == "succeeded":
            assert record.label.step is None and record.label.failures == [] and record.meta["causes"] == ""
    quiet_agent = [r for r in faulty if r.outcome == "succeeded" and any(
        system.component_kind(system.faults[f].component) == "agent" for f in r.label.fault_names)]
    if name == "trading":  # CORTEX's agent faults always decide its outcome; TradingAgents' often do not
        assert len(quiet_agent) > 20, "no faulty agent session that succeeded: the rule is not exercised"
    assert summary["vector_only"] == sum(r.label.step is None for r in faulty) >= len(quiet_agent)


@pytest.mark.parametrize("name", SYSTEMS)
def test_multi_fault_step_labels_name_but_for_causes_and_flag_over_determined_failures(name: str, wide) -> None:
    system = systems()[name]
    records, _, _ = wide[name]
    multi = [r for r in records if r.label is not None and len(r.label.fault_names) > 1 and r.outcome == "failed"]
    beside_a_cause = overdetermined = 0
    for record in multi:
        ids = record.label.fault_names
        full = _rerun(system, record, set(ids))
        assert _text(full) == [(s.agent, s.kind, s.content) for s in record.steps]
        but_for = {f for f in ids if not _rerun(system, record, set(ids) - {f}).failed}
        if but_for:
            causes = but_for
            beside_a_cause += bool(set(ids) - but_for)
            assert record.meta["overdetermined"] is False
        else:
            sufficient = [set(c) for k in range(1, len(ids)) for c in combinations(ids, k)
                          if _rerun(system, record, set(c)).failed]
            minimal = [s for s in sufficient if not any(o < s for o in sufficient)]
            causes = set().union(*minimal)
            overdetermined += 1
            assert record.meta["overdetermined"] is True
        assert set(record.meta["causes"].split(",")) == causes
        assert {f.category for f in record.label.failures} <= causes
        assert record.label.step == _agent_step(system, full, causes), record.id
    assert multi and (beside_a_cause or overdetermined)
    assert beside_a_cause > 0 if name == "trading" else overdetermined > 0


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_label_bit_has_a_text_trace(name: str, wide) -> None:
    system = systems()[name]
    records, _, _ = wide[name]
    for record in (r for r in records if r.label is not None):
        ids = set(record.label.fault_names)
        full = _text(_rerun(system, record, ids))
        for fault in ids:
            assert _text(_rerun(system, record, ids - {fault})) != full, (record.id, fault)


@pytest.mark.parametrize("name", SYSTEMS)
def test_labels_are_constructed_and_each_clean_twin_is_exported(name: str, wide) -> None:
    system = systems()[name]
    records, twins, summary = wide[name]
    faulty = [r for r in records if r.label is not None]
    assert summary["label_source"] == "constructed"
    assert {r.label_source for r in faulty} == {"constructed"} and {r.label_source for r in twins} == {"none"}
    assert [t.id for t in twins] == [f"{r.id}-twin" for r in faulty]
    for record, twin in zip(faulty[:40], twins):
        assert twin.meta["twin_of"] == record.id and twin.safe
        assert _text(_rerun(system, record, set())) == [(s.agent, s.kind, s.content) for s in twin.steps]


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_folder_meets_every_target_of_its_self_audit_and_its_card_says_so(name: str, wide, tmp_path) -> None:
    records, twins, summary = wide[name]
    out = export(systems()[name], records, summary, tmp_path / name, twins)
    figures = audit_folder(out)
    assert figures["sessions"] == 300 and figures["clean_twin"]["classifier"]["n"] > 50
    missed = {key for key, value in verdicts(figures).items() if value is not True}
    assert missed == set(), validity_section(figures)
    assert figures["positive_control"]["step_agent"]["accuracy"] >= 0.95
    assert validity_section(figures) in (out / "README.md").read_text(encoding="utf-8")


def test_every_cortex_fault_is_in_the_default_draw_and_can_decide(wide) -> None:
    system = systems()["cortex"]
    records, _, summary = wide["cortex"]
    assert default_pool(system) == list(system.faults) and summary["out_of_default_draw"] == []
    assert summary["never_decisive"] == []


@pytest.mark.parametrize(("name", "never"), [("trading", ["Cons-X", "Flow-X", "Feed-X"])])
def test_faults_that_never_decide_are_out_of_the_default_draw_and_refused_with_decisive_only(
        name: str, never: list[str], wide, tmp_path) -> None:
    system = systems()[name]
    records, _, summary = wide[name]
    assert [f for f in system.faults if f not in default_pool(system)] == never == summary["out_of_default_draw"]
    assert summary["never_decisive"] == never  # drawn here (named), never a cause of a failure
    assert all(r.outcome == "succeeded" for r in records if r.label and set(r.label.fault_names) <= set(never))
    assert not any(set(never) & set(str(r.meta["causes"]).split(",")) for r in records)
    assert f"faults never decisive here (in no kept session a cause of the failure): {never}" in card_text(summary)
    with pytest.raises(ArgumentError, match=rf"^Invalid argument faults='{never[0]}': expected faults that can decide "
                       rf"the outcome with decisive_only \({never[0]}: never or almost never decisive as built"):
        generate(name, 5, 0, tmp_path / "x", faults=[never[0]], decisive_only=True)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_blame_mix_draws_blames_fault_sets_every_session_a_failure(name: str) -> None:
    system = systems()[name]
    records, _, summary = generated(name, mix="blame", safe_share=0.0, decisive_only=True)
    sets = {tuple(r.label.fault_names) for r in records}
    assert sets <= {tuple(sorted(s, key=list(system.faults).index)) for s in system.blame_mix}
    assert all(r.outcome == "failed" for r in records) and summary["mix"] == "blame"
    multi = sum(len(s) > 1 for s in system.blame_mix) / len(system.blame_mix)  # trading 0/4, cortex 10/15
    assert abs(sum(len(r.label.fault_names) > 1 for r in records) / len(records) - multi) < 0.08
    assert summary["mix_leaves_out"] == list(system.blame_unbuilt)
    assert ("BLAME's cases the mix leaves out" in card_text(summary)) == bool(system.blame_unbuilt)
