"""docs/adding_a_system.md followed as written: its system passes what CI asks of a system.

The page's ``# simulators/<name>.py`` block is copied verbatim into a folder added to the
``simulators`` package's path, and its ``diff`` block is applied to the real
``simulators/registry.py`` (each context and removed line must be there); the registry that
edited file builds replaces ``systems`` wherever a module imported it, for this module only. The
system tests (``test_simulators_engine``, ``test_simulators_model``, ``test_model_mode_leaks``)
then run on the new system through their own functions, so a change to the page, to the
registry's layout or to those tests that breaks the example fails here. Nothing is written to the
repository.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_model_mode_leaks as leaks
import test_simulators_engine as engine
import test_simulators_model as model

import simulators
import simulators.registry

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adding_a_system.md"


def page_blocks() -> tuple[str, str, str]:
    """The page's system: (module name, its source, the registry diff)."""
    text = PAGE.read_text(encoding="utf-8")
    modules = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if re.match(r"# simulators/\w+\.py\n", b)]
    diffs = re.findall(r"```diff\n(.*?)```", text, flags=re.S)
    assert len(modules) == 1 and len(diffs) == 1, "the page shows one `# simulators/<name>.py` block and one diff"
    return re.match(r"# simulators/(\w+)\.py", modules[0]).group(1), modules[0], diffs[0]


def applied(source: str, diff: str) -> str:
    """``source`` with ``diff`` applied as a diff reads: context (``" "``) and removed (``-``) lines
    found in order, removed ones dropped, added (``+``) ones put where they stand."""
    lines, out, at = source.splitlines(), [], 0
    for line in diff.splitlines():
        mark, text = line[:1], line[1:]
        if mark == "+":
            out.append(text)
            continue
        assert mark in " -", f"diff line {line!r} is neither context, removed nor added"
        assert text in lines[at:], f"the page's diff line {text!r} is not in simulators/registry.py"
        found = lines.index(text, at)
        out += lines[at:found] + ([text] if mark == " " else [])
        at = found + 1
    return "\n".join(out + lines[at:]) + "\n"


def test_applied_reads_a_diff() -> None:
    """Context kept, removed lines dropped, added ones in place, the rest untouched."""
    assert applied("a\nb\nc\nd\n", " a\n-b\n+x\n c\n") == "a\nx\nc\nd\n"
    with pytest.raises(AssertionError, match="'z' is not in"):
        applied("a\n", " z\n")


NAME, SOURCE, DIFF = page_blocks()


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page's system, written and registered as the page says; its key."""
    folder = tmp_path_factory.mktemp("simulators")
    (folder / f"{NAME}.py").write_text(SOURCE, encoding="utf-8")
    registry = Path(simulators.registry.__file__)
    edited: dict[str, object] = {"__name__": "edited_registry"}
    real = simulators.registry.systems
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simulators, "__path__", [*simulators.__path__, str(folder)])
        exec(compile(applied(registry.read_text(encoding="utf-8"), DIFF), str(registry), "exec"), edited)
        systems = edited["systems"]
        added = set(systems()) - set(real())
        assert set(real()) <= set(systems()) and len(added) == 1, "the page's diff registers one system, keeping the others"
        for module in list(sys.modules.values()):
            if getattr(module, "systems", None) is real:
                patch.setattr(module, "systems", systems)
        yield added.pop()
    sys.modules.pop(f"simulators.{NAME}", None)


def test_the_example_is_the_size_the_page_says(registered: str) -> None:
    """Three agents, one software component, four faults (two kinds of target: roles and a hook)."""
    system = simulators.systems()[registered]
    assert [c.kind for c in system.spec.components].count("agent") == 3
    assert [c.kind for c in system.spec.components].count("software") == 1 and len(system.faults) == 4
    assert {system.component_kind(f.component) for f in system.faults.values()} == {"agent", "software"}


def test_every_fault_of_the_example_shows_and_replays(registered: str) -> None:
    for fault in simulators.systems()[registered].faults:
        engine.test_every_fault_flags_its_component_shows_and_replays(registered, fault)


@pytest.mark.parametrize("check", [
    engine.test_combinations_are_the_or_of_their_parts,
    engine.test_safe_runs_and_hard_negatives_are_zero_vectors_that_pass_the_checks,
    engine.test_nothing_a_method_reads_names_the_fault_or_the_label,
    engine.test_no_floor_beats_the_most_frequent_vector,
    engine.test_a_gold_answer_is_perfect,
    leaks.test_every_template_session_passes_the_check,
], ids=lambda f: f.__name__)
def test_the_example_meets_the_system_tests(registered: str, check) -> None:
    check(registered)


def test_the_example_gives_the_same_folder_per_seed(registered: str, tmp_path: Path) -> None:
    engine.test_the_same_seed_gives_the_same_folder_and_it_loads(registered, tmp_path)


def test_the_example_runs_in_model_mode(registered: str) -> None:
    """A model following each fault's instruction gives a kept session that replays its twin."""
    for fault in simulators.systems()[registered].faults:
        model.test_a_model_following_its_instruction_gives_a_kept_session_that_replays_its_twin(registered, fault)
