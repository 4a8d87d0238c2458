"""docs/adding_a_method.md followed as written: its example methods pass what CI asks of a method.

The page's ``# solvers/<name>.py`` blocks (a rule and a model-calling method) are copied
verbatim into a folder added to the ``solvers`` package's path, and its ``diff`` block is applied
to the real ``solvers/__init__.py`` (each context line must be there); the registry that edited
file builds is then installed for the duration of this module. The contract, framing, framing
sentence, render budget, gold-model and options-table tests run on the examples through their own
functions and parametrisations, so a change to the section, to the registry's layout or to those
tests that breaks an example fails here. ``test_card_model_method.py`` runs the model-calling
example through the command line and the report.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_contract as contract
import test_docs as docs
import test_framing as framing
import test_framing_sentence as sentence
import test_render_budget_solvers as budget

import solvers
from simulators import generate

sys.path.insert(0, str(docs.REPO / "tests" / "simulators"))
import test_gold_model as gold  # noqa: E402  (tests/simulators is not on the path by default)

PAGE = docs.REPO / "docs" / "adding_a_method.md"


def section_blocks() -> tuple[dict[str, str], str]:
    """The page's examples (name -> its module's source, each block opening with
    ``# solvers/<name>.py``) and the registration diff."""
    section = PAGE.read_text(encoding="utf-8")
    modules = {}
    for block in re.findall(r"```python\n(.*?)```", section, flags=re.S):
        name = re.match(r"# solvers/(\w+)\.py\n", block)
        if name:
            modules[name.group(1)] = block
    diffs = re.findall(r"```diff\n(.*?)```", section, flags=re.S)
    assert modules and len(diffs) == 1, "the page shows `# solvers/<name>.py` blocks and one diff"
    return modules, diffs[0]


EXAMPLES = sorted(section_blocks()[0])


def with_additions(source: str, diff: str) -> str:
    """``source`` with the ``+`` lines of ``diff`` added as a diff reads: each right after the line
    before it in the diff (a context line, ``" "``, found in order, or an added line); the ones
    before the first context line just above it."""
    lines, at, leading = source.splitlines(), None, []
    for line in diff.splitlines():
        mark, text = line[:1], line[1:]
        if mark == "+":
            if at is None:
                leading.append(text)
            else:
                lines.insert(at, text)
                at += 1
            continue
        assert mark == " ", f"the page's diff line {line!r} is neither added (+) nor context (space)"
        assert text in lines[at or 0 :], f"the page's context line {text!r} is not in solvers/__init__.py"
        found = lines.index(text, at or 0)
        lines[found:found] = leading
        at, leading = found + len(leading) + 1, []
    assert not leading, "the page's diff has no context line"
    return "\n".join(lines) + "\n"


def test_with_additions_places_lines_as_a_diff_reads() -> None:
    """Added lines follow the line before them; leading ones go above the first context line."""
    source = "a\nb\nc\n"
    assert with_additions(source, "+x\n b\n+y\n") == "a\nx\nb\ny\nc\n"
    assert with_additions(source, "+x\n a\n+y\n c\n+z\n") == "x\na\ny\nb\nc\nz\n"
    with pytest.raises(AssertionError, match="'z' is not in"):
        with_additions(source, " z\n+y\n")
    with pytest.raises(AssertionError, match="'a' is not in"):  # context lines in order
        with_additions(source, " b\n a\n")


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The page's methods, written and registered as the section says; their names. The registry
    the edited ``solvers/__init__.py`` builds must keep every registered method and add these."""
    modules, diff = section_blocks()
    folder = tmp_path_factory.mktemp("solvers")
    for name, module in modules.items():
        (folder / f"{name}.py").write_text(module, encoding="utf-8")
    init = Path(solvers.__file__)
    edited: dict[str, object] = {"__name__": "edited_solvers"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solvers, "__path__", [*solvers.__path__, str(folder)])
        exec(compile(with_additions(init.read_text(encoding="utf-8"), diff), str(init), "exec"), edited)
        for registry in ("SOLVERS", "NO_MODEL"):
            real, new = getattr(solvers, registry), edited[registry]
            assert isinstance(new, dict) and set(real) <= set(new), f"the page's diff drops methods from {registry}"
            for key in set(new) - set(real):
                patch.setitem(real, key, new[key])
        assert set(EXAMPLES) <= set(solvers.SOLVERS), "the page's diff does not register every example"
        assert set(EXAMPLES) & set(solvers.NO_MODEL) and set(EXAMPLES) - set(solvers.NO_MODEL), (
            "the page shows a rule and a model-calling method")
        yield EXAMPLES
    for name in EXAMPLES:
        sys.modules.pop(f"solvers.{name}", None)
        vars(solvers).pop(name, None)


def calling_a_model(names: list[str]) -> list[str]:
    return [name for name in names if name not in solvers.NO_MODEL]


@pytest.mark.parametrize("policy", contract.POLICIES)
@pytest.mark.parametrize("task_name", sorted(contract.TASKS))
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_keeps_the_contract(examples: list[str], name: str, task_name: str, policy: str,
                                    tmp_path: Path) -> None:  # fmt: skip
    """Each example on every task and offline policy, as every registered method."""
    contract.test_solver_contract(name, task_name, policy, tmp_path)


@pytest.mark.parametrize(("subsets", "framing_name"), contract.AGENTRX_RUNS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_keeps_the_contract_on_agentrx(examples: list[str], name: str, subsets: str, framing_name: str,
                                               tmp_path: Path) -> None:  # fmt: skip
    """Each example on AgentRx's subsets, known failures and verified-safe runs."""
    contract.test_solver_contract_on_agentrx(name, subsets, framing_name, tmp_path)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_is_label_blind(examples: list[str], name: str, tmp_path: Path) -> None:
    """Under unknown outcome each example answers a log and its safe twin alike."""
    framing.test_every_method_answers_no_fault_with_label_blind_prompts(name, tmp_path)


def test_model_calling_example_frames_and_budgets_every_call(examples: list[str], tmp_path: Path) -> None:
    """The model-calling example carries the framing sentence of each label kind and framing in
    every call, presupposes no failure under unknown outcome and keeps the render budget."""
    for name in calling_a_model(examples):
        for kind in sorted(sentence.TOYS):
            for known in (True, False):
                folder = tmp_path / f"{name}-{kind}-{known}"
                sentence.test_every_call_carries_the_framing_sentence(name, kind, known, folder)
        budget.test_prompts_keep_the_budget_and_the_attribution_says_what_was_left_out(name, tmp_path / name)


@pytest.fixture
def gold_folders(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """``test_gold_model``'s generated folders, with its gold model's knowledge (``GOLD``) holding
    them alone for this test and restored after it."""
    saved = dict(gold.GOLD)
    gold.GOLD.clear()
    folders = {}
    for system in gold.SYSTEMS:
        folders[system] = tmp_path / "gold" / system
        generate(system, 6, gold.SEED, folders[system], max_faults=2, safe_share=0.3)
        gold.GOLD.update({t.task: t for t in gold.load_trajectory_folder(folders[system])})
    yield folders
    gold.GOLD.clear()
    gold.GOLD.update(saved)


def test_model_calling_example_is_perfect_with_a_gold_model(
    examples: list[str], gold_folders: dict[str, Path], tmp_path: Path
) -> None:
    """The model-calling example passes ``test_gold_model``'s tests with no edit to them: its
    expectation comes from what the example declares (``LOG_VIEW``, ``NAMES``)."""
    for name in calling_a_model(examples):
        gold.test_a_gold_model_is_perfect_under_step_scoring(name, gold_folders, tmp_path / f"{name}-step")
        gold.test_a_gold_model_is_perfect_under_vector_scoring_within_what_the_method_can_name(
            name, gold_folders, tmp_path / f"{name}-vector")


def with_row(page: str, name: str) -> str:
    """``page`` (docs/options.md) with a last row for solver ``name`` in its methods table: its
    options and their defaults as the signature has them (the row the page asks of a method with
    options)."""
    options = " ".join(f"`{key}={value}`" for key, value in docs.signature_defaults(solvers.SOLVERS[name]).items())
    head, table = page.split("| solver | options (defaults) |", 1)
    rows, rest = table.split("\n\n", 1)
    return f"{head}| solver | options (defaults) |{rows}\n| `{name}` | {options} |\n\n{rest}"


def test_examples_meet_the_options_table(examples: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/options.md's methods table and every ``-S`` the docs show agree with the registry once
    the model-calling example has its row (and not before)."""
    [name] = calling_a_model(examples)
    with pytest.raises(AssertionError, match=name):
        docs.test_solver_options_table_matches_signatures()
    page = tmp_path / "options.md"
    page.write_text(with_row(docs.OPTIONS.read_text(encoding="utf-8"), name), encoding="utf-8")
    monkeypatch.setattr(docs, "OPTIONS", page)
    docs.test_solver_options_table_matches_signatures()
    docs.test_every_argument_shown_exists()
