"""BENCHMARK.md section 8 followed as written: its example method passes what CI asks of a method.

The section's ``# solvers/<name>.py`` block is copied verbatim into a folder added to the
``solvers`` package's path, and its ``diff`` block is applied to the real ``solvers/__init__.py``
(each context line must be there); the registry that edited file builds is then installed for the
duration of this module. The contract, framing and options-table tests run on the example through
their own functions and parametrisations, so a change to the section, to the registry's layout or
to those tests that breaks the example fails here.
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

import solvers

SECTION = "## 8. Adding a method"


def section_blocks() -> tuple[str, str, str]:
    """Section 8's example: the method's name, its module's source and the registration diff."""
    text = docs.CARD.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    module = docs.python_block(section, "# solvers/")
    name = re.match(r"# solvers/(\w+)\.py\n", module)
    diffs = re.findall(r"```diff\n(.*?)```", section, flags=re.S)
    assert name and len(diffs) == 1, "section 8 shows one `# solvers/<name>.py` block and one diff"
    return name.group(1), module, diffs[0]


def with_additions(source: str, diff: str) -> str:
    """``source`` with the ``+`` lines of ``diff`` added, each run of them just before the context
    line (``" "``) that follows it, or, at the end, just after the last context line."""
    lines, at, pending = source.splitlines(), 0, []
    for line in diff.splitlines():
        mark, text = line[:1], line[1:]
        if mark == "+":
            pending.append(text)
            continue
        assert mark == " ", f"section 8's diff line {line!r} is neither added (+) nor context (space)"
        assert text in lines[at:], f"section 8's context line {text!r} is not in solvers/__init__.py"
        at = lines.index(text, at)
        lines[at:at] = pending
        at += len(pending) + 1
        pending = []
    lines[at:at] = pending
    return "\n".join(lines) + "\n"


def test_with_additions_places_lines_around_their_context() -> None:
    """Added lines go above the context line that follows them, trailing ones below the last."""
    source = "a\nb\nc\n"
    assert with_additions(source, "+x\n b\n+y\n") == "a\nx\nb\ny\nc\n"
    with pytest.raises(AssertionError, match="'z' is not in"):
        with_additions(source, " z\n+y\n")


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Section 8's method, written and registered as the section says; its name. The registry
    the edited ``solvers/__init__.py`` builds must keep every registered method and add this one."""
    name, module, diff = section_blocks()
    folder = tmp_path_factory.mktemp("solvers")
    (folder / f"{name}.py").write_text(module, encoding="utf-8")
    init = Path(solvers.__file__)
    edited: dict[str, object] = {"__name__": "edited_solvers"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solvers, "__path__", [*solvers.__path__, str(folder)])
        exec(compile(with_additions(init.read_text(encoding="utf-8"), diff), str(init), "exec"), edited)
        for registry in ("SOLVERS", "NO_MODEL"):
            real, new = getattr(solvers, registry), edited[registry]
            assert isinstance(new, dict) and set(real) <= set(new), f"section 8's diff drops methods from {registry}"
            for key in set(new) - set(real):
                patch.setitem(real, key, new[key])
        assert name in solvers.SOLVERS, f"section 8's diff does not register {name}"
        yield name
    sys.modules.pop(f"solvers.{name}", None)
    vars(solvers).pop(name, None)


@pytest.mark.parametrize("policy", contract.POLICIES)
@pytest.mark.parametrize("task_name", sorted(contract.TASKS))
def test_example_keeps_the_contract(example: str, task_name: str, policy: str, tmp_path: Path) -> None:
    """The example on every task and offline policy, as every registered method."""
    contract.test_solver_contract(example, task_name, policy, tmp_path)


@pytest.mark.parametrize(("subsets", "framing_name"), contract.AGENTRX_RUNS)
def test_example_keeps_the_contract_on_agentrx(example: str, subsets: str, framing_name: str, tmp_path: Path) -> None:
    """The example on AgentRx's subsets, known failures and verified-safe runs."""
    contract.test_solver_contract_on_agentrx(example, subsets, framing_name, tmp_path)


def test_example_is_label_blind(example: str, tmp_path: Path) -> None:
    """Under unknown outcome the example answers a log and its safe twin alike."""
    framing.test_every_method_answers_no_fault_with_label_blind_prompts(example, tmp_path)


def test_example_meets_the_options_table(example: str) -> None:
    """The card's options table and every ``-S`` it shows still agree with the registry."""
    docs.test_solver_options_table_matches_signatures()
    docs.test_every_argument_shown_exists()
