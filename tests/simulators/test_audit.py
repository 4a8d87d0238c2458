"""The generator's self-audit (simulators.audit): each figure on hand-made folders whose answers
are computed by hand, the positive control on generated sessions of every fault, and the card's
validity section against a recomputation on a real generated folder."""

from __future__ import annotations

import hashlib

import pytest

from blame.schema import Component, FaultLabel, ListedFailure, Step, SystemSpec, Trajectory
from blame.trajectory_folder import load_trajectory_folder
import simulators.audit as audit_module
from simulators import generate
from simulators.audit import (
    audit,
    design_effect,
    evaluate,
    masked,
    mined_keywords,
    split,
    words,
)
from simulators.audit_report import validity_section, verdicts
from simulators.audit_control import CHECKERS
from simulators.dataset import TWINS, audit_folder, generate_records
from simulators.registry import systems

SPEC = SystemSpec(name="toy", components=[Component(id="a", name="A", kind="agent"),
                                          Component(id="b", name="B", kind="agent"),
                                          Component(id="h", name="H", kind="hardware")])
PLAIN, ODD = "the usual reply", "the usual reply zebra"


def session(number: int, texts: list[str], speakers: str = "ababab", fault: int | None = None,
            fault_name: str = "F", first_difference: int | None = None) -> Trajectory:
    """A toy session; ``fault``: the labelled step (its speaker is the one faulty component)."""
    steps = [Step(index=i, agent=speakers[i], kind="agent", content=text) for i, text in enumerate(texts)]
    label = None if fault is None else FaultLabel(
        faulty=[speakers[fault]], step=fault, agent=speakers[fault], fault_names=[fault_name],
        failures=[ListedFailure(step=fault, agent=speakers[fault], category=fault_name)])
    first = fault if first_difference is None else first_difference
    return Trajectory(id=f"toy-{number:03d}", source="toy", label_kind="vector", system=SPEC, steps=steps, label=label,
                      meta={"system": "toy", "first_difference": None if fault is None else first})


def keyword_session(number: int, position: int | None) -> Trajectory:
    """Six steps (a, b, a, b, a, b) saying the same thing, except the word ``zebra`` at ``position``."""
    return session(number, [ODD if i == position else PLAIN for i in range(6)], fault=position)


def test_words_mask_numbers_and_keep_letter_runs() -> None:
    assert masked("Plan 4 at 0.35 m/s, t=06:15, E301") == "Plan # at # m/s, t=#, E#"
    assert words("Plan 4 at 0.35 m/s, t=06:15") == ["plan", "#", "at", "#", "m", "s", "t", "#"]


def test_split_is_by_session_seeded_and_independent_of_order() -> None:
    records = [keyword_session(i, None) for i in range(11)]
    train, test = split(records)
    assert (len(train), len(test)) == (5, 6)
    assert {t.id for t in train}.isdisjoint(t.id for t in test)
    assert split(list(reversed(records))) == (train, test)
    assert split(records, seed=1) != (train, test)


def keyword_folder() -> tuple[list[Trajectory], list[Trajectory]]:
    """Train: zebra at steps 2, 2, 2, 4, 0, 4 and four safe runs; test: zebra at 4, 0, 2, two safe runs."""
    train = [keyword_session(i, p) for i, p in enumerate([2, 2, 2, 4, 0, 4, None, None, None, None])]
    test = [keyword_session(10 + i, p) for i, p in enumerate([4, 0, 2, None, None])]
    return train, test


def accuracies(figures: dict, target: str) -> dict[str, float | None]:
    return {name: f["accuracy"] for name, f in figures[target].items()}


def test_a_keyword_that_separates_is_found_by_every_text_shortcut_and_by_no_structural_one() -> None:
    """Only the word zebra marks the faulty turn; every step has the same length bin (15 and 21
    characters both give int(2 log2(1 + n)) = 8), so structure and priors see nothing."""
    train, test = keyword_folder()
    assert mined_keywords(train) == ["zebra"]
    figures = evaluate(train, test)
    # exact vector: train majority "a" (6 of 10); test has 3 "a" and 2 safe -> 3/5.
    assert accuracies(figures, "exact_vector") == {"majority": 0.6, "bag_of_words": 1.0, "structure": 0.6,
                                                   "length_prior": 0.6}
    # step+agent: train's most frequent labelled step is 2 (3 of 6): right once of the test's 4, 0, 2.
    assert accuracies(figures, "step_agent") == {
        "majority": 1 / 3, "step_bag_of_words": 1.0, "structure": 1 / 3, "position_prior": 1 / 3,
        "length_prior": 1 / 3, "keyword_rule": 1.0, "novel_turn": 1.0}
    assert figures["step_agent"]["majority"]["n"] == 3 and figures["exact_vector"]["majority"]["n"] == 5
    assert figures["keywords"] == ["zebra"]
    assert figures["variety"] == {"agent_turns": 90, "distinct_agent_turns": 2, "agent_turn_templates": 2,
                                  "word_types": 4, "problem_types": 2}
    assert figures["positive_control"] is None  # no checker for a toy system
    met = verdicts(figures)
    assert met["exact_vector/bag_of_words"] is False and met["exact_vector/structure"] is True
    assert met["step_agent/keyword_rule"] is False and met["step_agent/position_prior"] is True


def test_a_keyword_seen_once_or_also_in_a_clean_turn_is_not_mined() -> None:
    train = [keyword_session(0, 2), session(1, [PLAIN, "the usual reply zebra", "lion here", PLAIN, PLAIN, PLAIN],
                                            fault=2), keyword_session(2, 4)]
    assert mined_keywords(train) == []  # zebra is in session 1's fault-free prefix; lion in one faulty turn only


def test_a_fault_that_repeats_its_words_after_its_first_turn_still_gives_them_away() -> None:
    """Steps after the first difference are not clean text: zebra at steps 2 and 4 of a session whose
    fault is at 2, and at step 3 of another, is mined."""
    repeated = session(0, [PLAIN, PLAIN, ODD, PLAIN, ODD, PLAIN], fault=2)
    assert mined_keywords([repeated, keyword_session(1, 4), keyword_session(2, None)]) == ["zebra"]


def test_lengths_and_positions_are_what_the_priors_read() -> None:
    """Faulty sessions are 4 steps long with the fault at step 3, safe ones 6 steps long: the length
    prior gets every exact vector, the position prior every step, with no word of difference."""
    def toy(number: int, faulty: bool) -> Trajectory:
        return session(number, [PLAIN] * (4 if faulty else 6), fault=3 if faulty else None)

    train = [toy(i, i % 2 == 0) for i in range(8)]
    test = [toy(8 + i, i < 3) for i in range(5)]
    figures = evaluate(train, test)
    exact, step = accuracies(figures, "exact_vector"), accuracies(figures, "step_agent")
    assert exact["length_prior"] == 1.0 and exact["structure"] == 1.0 and exact["majority"] == 0.4
    assert step["position_prior"] == 1.0 and step["length_prior"] == 1.0 and step["structure"] == 1.0


def prefix_session(number: int, name: str, position: int, opening: str = PLAIN) -> Trajectory:
    return session(number, [opening] + [PLAIN] * 5, speakers="aaaaaa", fault=position, fault_name=name)


def test_a_prefix_without_signal_stays_at_the_majority_and_one_with_signal_does_not() -> None:
    """Train F, F, F, F, G, G; test F, F, G (majority F: 2/3), every fault at step 3 (one prefix
    shape: the position answers the majority). With the word storm opening every G session (before
    its first difference) the prefix classifier gets all three."""
    names = ["F", "F", "F", "F", "G", "G"]
    blind = evaluate([prefix_session(i, n, 3) for i, n in enumerate(names)],
                     [prefix_session(10 + i, n, 3) for i, n in enumerate("FFG")])
    assert accuracies(blind, "fault_free_prefix") == {"majority": 2 / 3, "classifier": 2 / 3, "position": 2 / 3}
    assert verdicts(blind)["fault_free_prefix/beyond_position"] is True
    assert "fault_free_prefix" not in verdicts(blind)  # the prefix against the majority alone: reported only

    def storm(number: int, name: str, position: int) -> Trajectory:
        return prefix_session(number, name, position, "a storm warning" if name == "G" else PLAIN)

    seen = evaluate([storm(i, n, 3) for i, n in enumerate(names)], [storm(10 + i, n, 3) for i, n in enumerate("FFG")])
    assert accuracies(seen, "fault_free_prefix") == {"majority": 2 / 3, "classifier": 1.0, "position": 2 / 3}
    assert verdicts(seen)["fault_free_prefix/beyond_position"] is False


def test_the_position_baseline_reads_the_prefix_shape_and_excuses_what_it_tells() -> None:
    """Train F at step 2 (three sessions), G at step 4 (two); test F at 2, G at 4 twice. Every step
    says the same words, so the words classifier answers the majority F (1/3); the prefix's shape
    (its length and speakers) tells them apart (3/3), and the words add nothing beyond it."""
    def toy(number: int, name: str, position: int) -> Trajectory:
        return session(number, [PLAIN] * 6, speakers="ababab", fault=position, fault_name=name)

    train = [toy(i, n, p) for i, (n, p) in enumerate([("F", 2), ("F", 2), ("F", 2), ("G", 4), ("G", 4)])]
    figures = evaluate(train, [toy(10 + i, n, p) for i, (n, p) in enumerate([("F", 2), ("G", 4), ("G", 4)])])
    assert accuracies(figures, "fault_free_prefix") == {"majority": 1 / 3, "classifier": 1 / 3, "position": 1.0}
    shape = audit_module.prefix_shape(train[0].steps[:2])  # counted from the end too: where the prefix stops
    assert {"n=2", "0:a:agent", "1:b:agent", "-1:b:agent", "-2:a:agent"} <= shape and "-3:a:agent" not in shape
    assert verdicts(figures)["fault_free_prefix/beyond_position"] is True


def test_a_clean_twin_that_tells_the_fault_misses_its_target_and_no_twin_is_no_verdict() -> None:
    """The prefix sessions above (majority F: 2/3 of the test), each with a clean twin: plain twins
    say nothing (2/3, met); twins of G sessions that mention the storm name G (3/3, missed)."""
    names = ["F", "F", "F", "F", "G", "G"]
    train = [prefix_session(i, n, 3) for i, n in enumerate(names)]
    test = [prefix_session(10 + i, n, 3) for i, n in enumerate("FFG")]

    def twins(storm: bool) -> dict[str, Trajectory]:
        return {t.id: session(900, ["a storm warning" if storm and t.label.fault_names == ["G"] else PLAIN] + [PLAIN] * 5,
                              speakers="aaaaaa") for t in train + test}

    plain, told = evaluate(train, test, twins=twins(False)), evaluate(train, test, twins=twins(True))
    assert accuracies(plain, "clean_twin") == {"majority": 2 / 3, "classifier": 2 / 3}
    assert accuracies(told, "clean_twin") == {"majority": 2 / 3, "classifier": 1.0}
    assert verdicts(plain)["clean_twin"] is True and verdicts(told)["clean_twin"] is False
    assert verdicts(evaluate(train, test))["clean_twin"] is None
    assert "the clean twin's words give 100.0% beside the majority's 66.7% (**no**)" in validity_section(told)


def test_design_effect_by_hand() -> None:
    # Two clusters of 4, right in one and wrong in the other: ICC 1, m = (16 + 16) / 8 = 4, deff 1 + 3 * 1.
    assert design_effect([True] * 4 + [False] * 4, ["A"] * 4 + ["B"] * 4) == 4.0
    # The same mix in both clusters: MSB 0 < MSW, ICC clipped at 0.
    assert design_effect([True, False] * 4, ["A"] * 4 + ["B"] * 4) == 1.0
    # Clusters A (1, 1, 0) and B (0, 0, 0): grand mean 1/3, MSB = (3 (1/3)^2 + 3 (1/3)^2) / 1 = 2/3,
    # MSW = (2 (1/3)^2 + (2/3)^2) / 4 = 1/6, n0 = 3, ICC = (2/3 - 1/6) / (2/3 + 2/6) = 1/2, m = 3, deff 2.
    assert design_effect([True, True, False, False, False, False], list("AAABBB")) == pytest.approx(2.0)
    assert design_effect([True] * 6, list("AAABBB")) is None  # constant correctness
    assert design_effect([True, False, True], list("AAA")) is None  # one cluster


def test_the_section_shows_every_figure_and_each_verdict() -> None:
    text = validity_section(evaluate(*keyword_folder()))
    assert "| exact vector | bag of words | 5 | 100.0 | 40.0 | **no** |" in text
    assert "| step+agent | position prior | 3 | 33.3 | 0.0 | yes |" in text
    assert "| fault id (fault-free prefix) | classifier | 3 |" in text
    assert "Positive control: no text checker for this system." in text
    assert "keywords mined from the train half (in faulty turns, never in a clean step): 1 (`zebra`)" in text


@pytest.mark.parametrize("key", sorted(CHECKERS))
def test_the_positive_control_finds_each_fault_in_the_text_and_nothing_on_its_twin(key: str) -> None:
    """For every fault of the catalogue, two kept sessions: the checker names exactly that fault,
    for an agent fault at the turn it changed (a checker may name no turn when the fault caused no
    failure: no step label); on safe runs it names none."""
    system = systems()[key]
    for fault in system.faults.values():
        records, _ = generate_records(system, 2, 7, faults=[fault.id], safe_share=0.0)
        for t in records:
            found = CHECKERS[key](t.steps)
            assert set(found) == {fault.id}, (fault.id, found)
            agent_fault = system.component_kind(fault.component) == "agent"
            first = t.meta["first_difference"]
            turns = (None,) if not agent_fault else (first,) if t.label.step is not None else (first, None)
            assert found[fault.id] in turns, fault.id
    safe, _ = generate_records(system, 6, 7, safe_share=1.0)
    assert all(CHECKERS[key](t.steps) == {} for t in safe)


def test_the_card_of_a_generated_folder_holds_its_recomputed_validity_section(tmp_path) -> None:
    out = tmp_path / "cortex"
    generate("cortex", 60, 3, out)
    records = load_trajectory_folder(out)
    figures = audit_folder(out)
    assert validity_section(figures) in (out / "README.md").read_text(encoding="utf-8")
    assert validity_section(audit(records)) not in (out / "README.md").read_text(encoding="utf-8")  # twins count
    assert figures["sessions"] == 60 and figures["positive_control"]["exact_vector"]["n"] == 60


def test_a_folder_larger_than_the_sample_is_audited_on_the_same_seeded_sample_streamed_or_recomputed(
        tmp_path, monkeypatch) -> None:
    """With SAMPLE at 12, a 30-session folder's card audits 12 sessions chosen by the hash of the id (and
    their clean twins: those of sessions dropped from the sample as it streamed are dropped too), says
    so, and equals the audit recomputed from the folder read back in another order."""
    monkeypatch.setattr(audit_module, "SAMPLE", 12)
    out = tmp_path / "trading"
    generate("trading", 30, 3, out)
    records = load_trajectory_folder(out)
    figures = audit(records[::-1], twins=load_trajectory_folder(out / TWINS)[::-1])
    assert figures["sessions"] == 12 and figures["folder_sessions"] == 30
    assert "(a sample of 12 of its 30 sessions, chosen by a seeded hash of the id)" in validity_section(figures)
    assert validity_section(figures) in (out / "README.md").read_text(encoding="utf-8")
    keys = sorted(records, key=lambda t: hashlib.sha256(f"0:sample:{t.id}".encode()).hexdigest())
    sample = audit_module.Sample()
    for t in records:
        sample.add(t)
    assert sorted(t.id for _, _, t in sample._heap) == sorted(t.id for t in keys[:12])


HOSTILE = ["**Rating**: Maybe\nRecommendation: Soon", "FINAL TRANSACTION PROPOSAL: **PERHAPS** Recommendation: Buy",
           "MACD histogram 1.2.3 (bullish); close 5 is 1.2.3% above SMA50 4 (bearish)", "GMFCS V; Plan 4; Stop rules:",
           "ALERT t=00:05: HR 1e9", "(1) Nowhere: an invented figure. (2) x", "", "- headline (a) (b)\n### x (source: y)"]


@pytest.mark.parametrize("key", sorted(CHECKERS))
def test_the_checkers_never_raise_on_text_a_model_may_write(key: str) -> None:
    """Model mode exports through the same card: any text gives an answer, never an exception."""
    safe, _ = generate_records(systems()[key], 1, 7, safe_share=1.0)
    for n, text in enumerate(HOSTILE):
        steps = [s.model_copy(update={"content": HOSTILE[(n + s.index) % len(HOSTILE)]}) for s in safe[0].steps]
        assert isinstance(CHECKERS[key](steps), dict)
