"""Hostile component names: ``solvers._output.resolve_component`` resolves a name only to what it
spells.

A name reduced to nothing (``???``, an emoji, a non-Latin name under the old ``[a-z0-9]`` key)
matches nothing; non-Latin names match after NFKC and case folding and keep their letters;
Latin names keep the lenient case, punctuation and spacing match; collisions are ambiguous.
"""

from __future__ import annotations

import json
import time

import pytest
from _toys import run_one, saved, scripted

from blame.schema import Component, FaultLabel, Step, SystemSpec, Trajectory
from scorers.attribution import attribution_values
from solvers._output import parse_agent_step, parse_faulty, resolve_component
from solvers.a2p import a2p
from solvers.all_at_once import all_at_once


def _agents(*names: str) -> SystemSpec:
    return SystemSpec(name="s", components=[Component(id=n, name=n, kind="agent") for n in names])


RENAMED = _agents("Orchestrator", "网页浏览员")
"""The reported case: one agent renamed with no Latin letter."""
CHINESE = _agents("Orchestrator", "网页浏览员", "协调员")
MIXED = _agents("Agent_网页", "Agent_协调")
LATIN = _agents("Orchestrator", "WebSurfer", "Coder")


@pytest.mark.parametrize("system", [RENAMED, CHINESE])
@pytest.mark.parametrize("answer", ["???", "！", "🙂", "Вебсерфер", "协调员x", "—", "\u200b", "٭٭", "\u0301", "🙂\ufe0f"])
def test_an_answer_that_spells_no_name_resolves_to_nothing(answer: str, system: SystemSpec) -> None:
    """The reported case and its kin: punctuation, symbols, format characters, a lone
    combining mark and other scripts do not resolve to a non-Latin name."""
    assert resolve_component(answer, system) is None


def test_non_latin_names_resolve_to_themselves_only() -> None:
    assert resolve_component("协调员", RENAMED) is None
    assert resolve_component("网页浏览员", CHINESE) == "网页浏览员"
    assert resolve_component("协调员", CHINESE) == "协调员"
    assert resolve_component("网页", CHINESE) is None
    assert resolve_component("网页浏览员协调员", CHINESE) is None
    assert resolve_component("Agent_网页", MIXED) == "Agent_网页"
    assert resolve_component("agent 协调", MIXED) == "Agent_协调"  # Latin part lenient
    assert resolve_component("Agent_", MIXED) is None
    assert resolve_component("Agent_浏览", MIXED) is None


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("网页\u200b浏览员", "网页浏览员"),  # zero-width space
        ("\ufeff协调员\u200d", "协调员"),  # BOM and zero-width joiner
        ("ＷｅｂＳｕｒｆｅｒ", "WebSurfer"),  # full-width Latin, NFKC
        ("Ｗｅｂ＿Ｓｕｒｆｅｒ", "WebSurfer"),
        ("Web\u00adSurfer", "WebSurfer"),  # soft hyphen
        ("web_surfer", "WebSurfer"),  # today's lenient Latin matching kept
        ("WEB SURFER.", "WebSurfer"),
    ],
)
def test_format_characters_and_width_do_not_change_a_name(answer: str, expected: str) -> None:
    assert resolve_component(answer, CHINESE if expected in CHINESE.ids else LATIN) == expected


@pytest.mark.parametrize("answer", ["Вебсерфер", "WеbSurfеr", "Wеbsurfer", "Οrchestrator", "Cоder", "WébSurfer"])
def test_homoglyphs_and_accents_do_not_resolve_to_a_latin_name(answer: str) -> None:
    """Cyrillic or Greek letters that look Latin, and an added accent, spell another name."""
    assert resolve_component(answer, LATIN) is None


def test_combining_marks_are_part_of_the_name() -> None:
    system = _agents("José", "Jose", "हिंदी")
    assert resolve_component("JOSÉ", system) == "José"
    assert resolve_component("Jose\u0301", system) == "José"  # decomposed: NFKC composes it
    assert resolve_component("jose", system) == "Jose"
    assert resolve_component("हिंदी", system) == "हिंदी"
    assert resolve_component("हद", system) is None  # the vowel signs are letters of the name


def test_names_whose_keys_collide_are_ambiguous_not_the_first() -> None:
    system = _agents("协调-员", "协调_员")
    assert resolve_component("协调员", system) is None
    assert resolve_component("协调-员", system) == "协调-员"  # exact still resolves
    assert resolve_component("协调－员", system) == "协调-员"  # full-width hyphen, NFKC
    assert resolve_component("FILE SURFER", _agents("file_surfer", "File-Surfer")) is None
    assert resolve_component("FILE_SURFER", _agents("file_surfer", "File-Surfer")) == "file_surfer"


def test_names_that_spell_nothing_match_only_exactly() -> None:
    system = _agents("???", "🙂", "Coder")
    assert resolve_component("???", system) == "???"
    assert resolve_component("？？？", system) == "???"
    assert resolve_component("!!!", system) is None
    assert resolve_component("🙂", system) == "🙂"
    assert resolve_component("🙃", system) is None


def test_a_very_long_answer_resolves_in_linear_time() -> None:
    for answer in ("网" * 1_000_000, "a\u0301" * 500_000, "-" * 1_000_000, "\u200b" * 1_000_000):
        start = time.perf_counter()
        assert resolve_component(answer, CHINESE) is None
        assert time.perf_counter() - start < 5


def test_parsers_report_an_unknown_agent_not_a_match() -> None:
    """parse_agent_step (all-at-once, a2p, propose-and-verify) and parse_faulty (POIROT, vector
    answers) turn a spelled-nothing answer into an error."""
    agent, step, _, errors = parse_agent_step('{"agent": "???", "step": 1}', CHINESE, 3, CHINESE.ids)
    assert agent is None and step == 1 and errors == ["unknown agent '???' (expected one of "
                                                      "['Orchestrator', '网页浏览员', '协调员'])"]
    faulty, _, errors = parse_faulty('{"faulty": ["🙂", "协调员"]}', CHINESE)
    assert faulty == ["协调员"] and errors == ["unknown component '🙂'"]


def _renamed() -> Trajectory:
    """A Who&When-like folder with one agent renamed 网页浏览员, the label on it."""
    return Trajectory(
        id="renamed", source="unit", label_kind="step", task="Find the page.", system=RENAMED,
        steps=[Step(index=0, agent="Orchestrator", kind="agent", content="Search the web."),
               Step(index=1, agent="网页浏览员", kind="agent", content="I found nothing.")],
        label=FaultLabel(faulty=["网页浏览员"], step=1, agent="网页浏览员"),
    )


@pytest.mark.parametrize("solver", [all_at_once, a2p])
@pytest.mark.parametrize("answer", ["???", "Вебсерфер", "协调员"])
def test_a_wrong_name_is_not_scored_correct(solver, answer: str, tmp_path) -> None:
    """The reported end-to-end case: these answers scored joint 1.0 on the old resolver."""
    text = json.dumps({"abduction": "", "action": "", "prediction": "", "reason": "", "agent": answer, "step": 1})
    sample = run_one(_renamed(), solver(), scripted([text]), tmp_path)
    attribution = saved(sample)
    assert attribution.agent != "网页浏览员"
    values = attribution_values(attribution, _renamed())
    assert values["joint"] == 0
