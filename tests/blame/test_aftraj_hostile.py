"""AFTraj as strict as the other loaders, and its task's selections: a selection that
leaves no row is one line naming the argument, before any model call; names must be strings,
conv_ids unique, JSON cells plain JSON, and the test split a list of conv_ids per subset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blame.aftraj import FILES, load_aftraj
from blame.arguments import ArgumentError
from blame.errors import DataFormatError
from tasks.aftraj import aftraj
from test_aftraj import CODE_TURNS, MATH_TURNS, data_dir, row, turn, write  # noqa: F401 (data_dir is a fixture)


def test_a_test_split_matching_no_row_is_one_line_naming_the_argument(data_dir: Path) -> None:
    (data_dir / "splits_test.json").write_text(json.dumps({"test_safe": ["nobody"], "test_unsafe": [7]}))
    assert load_aftraj(data_dir, paper_test_split=True) == []
    with pytest.raises(ArgumentError, match=r"^Invalid argument paper_test_split=True: expected false: no conv_id of "
                       r"splits_test.json is among the 5 rows selected by subset and domains\.$"):
        aftraj(data_dir=str(data_dir), paper_test_split=True)
    with pytest.raises(ArgumentError, match=r"^Invalid argument domains='gaia,hotpotqa': expected domains present"):
        aftraj(data_dir=str(data_dir), domains="gaia,hotpotqa", paper_test_split=True)


@pytest.mark.parametrize("domains", [5, [1, "math"], "", " , ", [], {"math": 1}])
def test_domains_must_be_names(data_dir: Path, domains: Any) -> None:
    with pytest.raises(ArgumentError, match=r"^Invalid argument domains=.*: expected one or more domain names"):
        aftraj(data_dir=str(data_dir), domains=domains)


@pytest.mark.parametrize(
    ("split", "field", "problem"),
    [
        ({"test_safe": "s2", "test_unsafe": ["u1"]}, "test_safe", "expected list, got str"),
        ({"test_safe": ["s2"]}, "test_unsafe", "missing"),
        ({"test_safe": ["s2", None], "test_unsafe": []}, "test_safe[1]", "expected a conv_id"),
        ({"test_safe": [["s2"]], "test_unsafe": []}, "test_safe[0]", "expected a conv_id"),
        ([], "<json>", "expected an object"),
    ],
)
def test_a_malformed_test_split_names_its_field(data_dir: Path, split: Any, field: str, problem: str) -> None:
    (data_dir / "splits_test.json").write_text(json.dumps(split))
    with pytest.raises(DataFormatError) as error:
        load_aftraj(data_dir, paper_test_split=True)
    assert (Path(error.value.path).name, error.value.field) == ("splits_test.json", field) and problem in error.value.problem


def test_the_test_split_file_is_read_as_strict_json(data_dir: Path) -> None:
    (data_dir / "splits_test.json").write_text('{"test_safe": [], "test_safe": ["s2"], "test_unsafe": []}')
    with pytest.raises(DataFormatError, match="key 'test_safe' appears twice"):
        load_aftraj(data_dir, paper_test_split=True)


@pytest.mark.parametrize(
    ("unsafe", "field", "problem"),
    [
        ([row("u", "math", json.dumps([turn("user", "x"), {**turn("x"), "role": 5}]), step=1, agent="5")], "row 0.turns[1].role",
         "expected a string, got int"),
        ([row("u", "math", CODE_TURNS, step=1, agent=1.5)], "row 0.mistake_agent", "expected a string, got float"),
        ([row("u", 3, CODE_TURNS, step=1, agent="CodeWriter")], "row 0.domain", "expected a string"),
        ([row(2.5, "math", CODE_TURNS, step=1, agent="CodeWriter")], "row 0.conv_id", "or an integer"),
        ([row("  ", "math", CODE_TURNS, step=1, agent="CodeWriter")], "row 0.conv_id", "missing or empty"),
        ([row("u", "math", CODE_TURNS, step=1, agent="CodeWriter"), row("u", "math", MATH_TURNS, step=1, agent="MathSolver")],
         "row 1.conv_id", "'u' repeats row 0"),
        ([row("u", "math", json.dumps(CODE_TURNS).replace('"Write a sort."', "NaN"), step=1, agent="CodeWriter",
              num_turns=3)], "row 0.turns", "NaN is not a JSON number"),
        ([row("u", "math", [json.dumps(t) for t in CODE_TURNS[:2]] + ['{"role": "Reviewer", "role": "user"}'], step=1,
              agent="CodeWriter")], "row 0.turns[2]", "key 'role' appears twice"),
    ],
)  # fmt: skip
def test_hostile_rows_name_file_row_and_field(tmp_path: Path, unsafe: list, field: str, problem: str) -> None:
    folder = write(tmp_path / "bad", [row("ok", "math", CODE_TURNS)], unsafe)
    with pytest.raises(DataFormatError) as error:
        load_aftraj(folder, "unsafe")
    assert (Path(error.value.path).name, error.value.field) == (FILES["unsafe"], field), error.value
    assert problem in error.value.problem, error.value


def test_integer_conv_ids_still_load(tmp_path: Path) -> None:
    folder = write(tmp_path / "ints", [row(7, "math", CODE_TURNS)], [row(8, "math", CODE_TURNS, step=1, agent="CodeWriter")])
    assert [t.id for t in load_aftraj(folder)] == ["safe_7", "unsafe_8"]
