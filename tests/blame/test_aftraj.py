"""Tests for blame/aftraj.py and tasks/aftraj.py on small parquet fixtures built here.

The fixtures follow the documented AFTraj format (columns of AgentForesight's ``inference/
data.py``; turns ``{role, action, content, thought}``): two safe and three unsafe rows over two
domains with turns as lists of structs, and a file whose turns and tools are JSON strings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.log import list_eval_logs, read_eval_log

import providers.offline_model  # noqa: F401  (registers offline/...)
from blame.aftraj import FILES, load_aftraj
from blame.errors import DataFormatError, DatasetNotFoundError
from blame.schema import Attribution
from blame.state import FRAMING_KEY, UNKNOWN_OUTCOME
from tasks.aftraj import aftraj

REPO = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")


def turn(role: str, content: str = "", action: str = "", thought: str = "") -> dict[str, str]:
    return {"role": role, "action": action, "content": content, "thought": thought}


CALC = json.dumps([{"name": "compute", "arguments": json.dumps({"expr": "2+2"})}])
MATH_TURNS = [
    turn("user", "What is 2+2?"),
    turn("MathSolver", "Let me compute.", CALC, "simple addition"),
    turn("environment", "4"),
    turn("Verifier", "The answer is 5.", "", "check"),
    turn("MathSolver", "Final: 5"),
]
CODE_TURNS = [
    turn("user", "Write a sort."),
    turn("CodeWriter", "def sort(x): return x"),
    turn("Reviewer", "Looks fine."),
]


def row(conv_id: str, domain: str, turns, step=None, agent=None, **extra) -> dict:
    base = {
        "conv_id": conv_id,
        "domain": domain,
        "task": f"task {conv_id}",
        "gold_answer": f"gold {conv_id}",
        "num_turns": len(turns if not isinstance(turns, str) else json.loads(turns)) if extra.get("num_turns", 0) is not None else None,
        "tools": [{"name": "compute", "description": "evaluate an expression"}],
        "turns": turns,
        "mistake_step": step,
        "mistake_agent": agent,
        "mistake_reason": "wrong arithmetic" if step is not None else None,
        "unsafe_source": "natural" if step is not None else None,
    }
    base.update(extra)
    return base


def write(folder: Path, safe: list[dict], unsafe: list[dict], test_split: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(safe).to_parquet(folder / FILES["safe"])
    pd.DataFrame(unsafe).to_parquet(folder / FILES["unsafe"])
    if test_split is not None:
        (folder / "splits_test.json").write_text(json.dumps(test_split))
    return folder


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    safe = [
        row("s1", "math", MATH_TURNS[:3], step=-1, agent=""),
        row("s2", "coding", CODE_TURNS),
    ]
    unsafe = [
        row("u1", "math", MATH_TURNS, step=3, agent="Verifier"),
        row("u2", "coding", CODE_TURNS, step=1, agent="codewriter"),  # case differs from the role
        row("u3", "math", MATH_TURNS, step=1, agent="Verifier"),  # Verifier does not speak at step 1
    ]
    return write(tmp_path / "aftraj", safe, unsafe, {"test_safe": ["s2"], "test_unsafe": ["u1", "u3"]})


def test_rows_become_trajectories(data_dir: Path):
    """One step per turn (mistake_step is the turn index); roles become components by kind;
    thought/content/action form the step's content; labels, ids and meta as documented."""
    trajectories = load_aftraj(data_dir)
    assert [t.id for t in trajectories] == ["safe_s1", "unsafe_u1", "safe_s2", "unsafe_u2", "unsafe_u3"]
    u1 = trajectories[1]
    assert u1.source == "aftraj/math" and u1.task == "task u1" and u1.reference_answer == "gold u1"
    assert [s.agent for s in u1.steps] == ["user", "MathSolver", "environment", "Verifier", "MathSolver"]
    assert [s.kind for s in u1.steps] == ["human", "tool_call", "tool_result", "agent", "agent"]
    assert u1.steps[1].content == f"(thought) simple addition\nLet me compute.\n(action) {CALC}"
    assert u1.steps[1].tool_calls == ["compute"] and u1.steps[3].source_role == "Verifier"
    assert [(c.id, c.kind) for c in u1.system.components] == [
        ("user", "human"), ("MathSolver", "agent"), ("environment", "software"), ("Verifier", "agent"),
    ]
    assert "compute" in u1.system.component("environment").description
    assert u1.label is not None and (u1.label.step, u1.label.agent, u1.label.faulty) == (3, "Verifier", ["Verifier"])
    assert u1.label.reason == "wrong arithmetic"
    assert u1.meta == {
        "conv_id": "u1", "domain": "math", "macro_domain": "Math", "subset": "unsafe", "unsafe_source": "natural",
        "n_steps": 5, "n_agents": 2, "n_errors": 1, "label_consistent": True,
    }
    s1 = trajectories[0]
    assert s1.label is None and s1.meta["n_errors"] == 0 and s1.meta["label_consistent"] is None
    # a case-insensitive mistake_agent resolves to the role's spelling
    assert trajectories[3].label.agent == "CodeWriter" and trajectories[3].meta["macro_domain"] == "Coding"
    # label_consistent is False when the labelled agent does not speak at the labelled step
    assert trajectories[4].meta["label_consistent"] is False


def test_subsets_domains_and_test_split(data_dir: Path):
    assert [t.id for t in load_aftraj(data_dir, "unsafe")] == ["unsafe_u1", "unsafe_u2", "unsafe_u3"]
    assert [t.id for t in load_aftraj(data_dir, "safe")] == ["safe_s1", "safe_s2"]
    assert [t.id for t in load_aftraj(data_dir, domains=["coding"])] == ["safe_s2", "unsafe_u2"]
    assert [t.id for t in load_aftraj(data_dir, paper_test_split=True)] == ["safe_s2", "unsafe_u1", "unsafe_u3"]
    with pytest.raises(ValueError, match="unknown AFTraj subset"):
        load_aftraj(data_dir, "train")


def test_turns_stored_as_json_strings(tmp_path: Path):
    """``turns`` and ``tools`` may be JSON strings rather than lists of structs."""
    folder = write(
        tmp_path / "strings",
        [row("s", "gaia", json.dumps(MATH_TURNS[:3]), tools=json.dumps([{"name": "search"}]))],
        [row("u", "gaia", json.dumps(MATH_TURNS), step=2, agent="environment", tools="[]")],
    )
    safe, unsafe = load_aftraj(folder)
    assert len(safe.steps) == 3 and "search" in safe.system.component("environment").description
    assert len(unsafe.steps) == 5 and unsafe.label.agent == "environment" and unsafe.meta["macro_domain"] == "Agentic"


def test_missing_data_is_a_clear_error(tmp_path: Path):
    """No data_dir, a missing folder or file: DatasetNotFoundError naming what is missing and
    how to get the data; never a bare traceback."""
    with pytest.raises(DatasetNotFoundError, match="no data_dir given.*-T data_dir=.*huggingface-cli download ZBox008003/AFTraj"):
        load_aftraj(None)
    with pytest.raises(DatasetNotFoundError, match="aftraj_safe.parquet"):
        load_aftraj(tmp_path / "nowhere")
    with pytest.raises(PrerequisiteError, match="DatasetNotFoundError: .*-T data_dir"):  # the task: one line
        aftraj()
    folder = write(tmp_path / "only", [row("s", "math", CODE_TURNS)], [row("u", "math", CODE_TURNS, step=1, agent="CodeWriter")])
    (folder / FILES["safe"]).unlink()
    assert [t.id for t in load_aftraj(folder, "unsafe")] == ["unsafe_u"]  # only the needed file
    with pytest.raises(DatasetNotFoundError, match="aftraj_safe.parquet"):
        load_aftraj(folder)
    with pytest.raises(DatasetNotFoundError, match="splits_test.json"):
        load_aftraj(folder, "unsafe", paper_test_split=True)


@pytest.mark.parametrize(
    "safe, unsafe, field, problem",
    [
        ([row("s", "math", CODE_TURNS, step=1, agent="CodeWriter")], [], "row 0.mistake_step", "safe trajectory has decisive step 1"),
        ([], [row("u", "math", CODE_TURNS, step=None, agent="CodeWriter")], "row 0.mistake_step", "needs a decisive step"),
        ([], [row("u", "math", CODE_TURNS, step=-1, agent="CodeWriter")], "row 0.mistake_step", "needs a decisive step"),
        ([], [row("u", "math", CODE_TURNS, step=3, agent="CodeWriter")], "row 0.mistake_step", "outside the turns (0..2)"),
        ([], [row("u", "math", CODE_TURNS, step="0_1", agent="CodeWriter")], "row 0.mistake_step", "expected an integer"),
        ([], [row("u", "math", CODE_TURNS, step="1e0", agent="CodeWriter")], "row 0.mistake_step", "expected an integer"),
        ([], [row("u", "math", CODE_TURNS, step=" 1", agent="CodeWriter")], "row 0.mistake_step", "expected an integer"),
        ([], [row("u", "math", CODE_TURNS, step="+1", agent="CodeWriter")], "row 0.mistake_step", "expected an integer"),
        ([row("s", "math", CODE_TURNS, step="-1_0")], [], "row 0.mistake_step", "expected an integer"),
        ([], [row("u", "math", CODE_TURNS, step=1, agent="CodeWriter", num_turns="3_0")], "row 0.num_turns", "expected an integer"),
        ([], [row("u", "math", CODE_TURNS, step=1, agent="")], "row 0.mistake_agent", "missing or empty"),
        ([], [row("u", "math", CODE_TURNS, step=1, agent="CodeWriter", num_turns=7)], "row 0.num_turns", "is 7 but the row has 3"),
        ([], [row("u", "math", [turn(""), *CODE_TURNS], step=1, agent="CodeWriter")], "row 0.turns[0].role", "missing or empty"),
        ([], [row("u", "math", "[not json", step=1, agent="CodeWriter", num_turns=None)], "row 0.turns", "not valid JSON"),
    ],
)
def test_malformed_rows_name_file_row_and_field(tmp_path: Path, safe, unsafe, field, problem):
    filler = row("ok", "math", CODE_TURNS, step=1, agent="CodeWriter")
    folder = write(tmp_path / "bad", safe or [row("ok", "math", CODE_TURNS)], unsafe or [filler])
    with pytest.raises(DataFormatError) as error:
        load_aftraj(folder)
    assert error.value.field == field and problem in error.value.problem
    assert error.value.path.endswith(".parquet")


def test_steps_as_digit_strings_are_read(tmp_path: Path):
    """A plain digit string is an integer (and "-1" the safe marker): only other spellings fail."""
    folder = write(tmp_path / "digits", [row("s", "math", CODE_TURNS, step="-1")],
                   [row("u", "math", CODE_TURNS, step="1", agent="CodeWriter", num_turns="3")])  # fmt: skip
    safe, unsafe = load_aftraj(folder)
    assert safe.label is None and unsafe.label is not None and unsafe.label.step == 1


def test_missing_column_is_named(tmp_path: Path):
    folder = write(tmp_path / "cols", [row("s", "math", CODE_TURNS)], [row("u", "math", CODE_TURNS, step=1, agent="CodeWriter")])
    pd.DataFrame([{"conv_id": "x", "domain": "math"}]).to_parquet(folder / FILES["safe"])
    with pytest.raises(DataFormatError, match="turns.*missing column"):
        load_aftraj(folder)


def test_unknown_mistake_agent_becomes_a_silent_component(tmp_path: Path):
    """A labelled agent that never speaks is added as an agent component rather than rejected."""
    folder = write(tmp_path / "ghost", [row("s", "math", CODE_TURNS)], [row("u", "math", CODE_TURNS, step=1, agent="Planner")])
    unsafe = load_aftraj(folder, "unsafe")[0]
    assert unsafe.system.ids[-1] == "Planner" and unsafe.meta["label_consistent"] is False


@pytest.mark.parametrize("policy", ["random", "mixed"])
def test_task_end_to_end_in_process(data_dir: Path, policy: str, tmp_path: Path):
    """tasks/aftraj.py with the online auditor (its default) on the fixture: a scored log with
    the auditing block and the headline Exact-F1."""
    [log] = eval(aftraj(data_dir=str(data_dir)), model=f"offline/{policy}", limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert [s.id for s in log.samples] == ["safe_s1", "unsafe_u1"]
    [block] = log.results.scores
    assert block.name == "auditing" and block.metrics["n_safe"].value == 1 and block.metrics["n_unsafe"].value == 1
    assert log.results.headline.metric == "exact_f1"
    for sample in log.samples:
        assert Attribution.model_validate_json(sample.output.completion).method == "online_auditor"


def test_task_options(data_dir: Path):
    assert len(aftraj(data_dir=str(data_dir), domains="coding").dataset) == 2
    unsafe = aftraj(data_dir=str(data_dir), domains=["math", "coding"], subset="unsafe").dataset
    assert len(unsafe) == 3
    assert {s.metadata[FRAMING_KEY] for s in unsafe} == {UNKNOWN_OUTCOME}, "AFTraj is always of unknown outcome"
    with pytest.raises(ValueError, match=r"^Invalid argument domains='gaia': expected domains present in the data: coding, math\.$"):
        aftraj(data_dir=str(data_dir), domains="gaia")


@pytest.mark.e2e
def test_cli(data_dir: Path, tmp_path: Path):
    """`inspect eval tasks/aftraj.py -T data_dir=...` with the offline model writes a scored log."""
    command = [INSPECT, "eval", "tasks/aftraj.py", "--model", "offline/random", "-T", f"data_dir={data_dir}",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and len(log.samples) == 5
    assert {s.name for s in log.results.scores} == {"auditing"}


@pytest.mark.e2e
def test_cli_without_data_dir_is_a_clear_error(tmp_path: Path):
    result = subprocess.run(
        [INSPECT, "eval", "tasks/aftraj.py", "--model", "offline/random", "--log-dir", str(tmp_path), "--display", "plain"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "500"},
    )  # Inspect prints a PrerequisiteError as one message, no traceback (unless --display none)
    assert result.returncode != 0
    output = (result.stdout + result.stderr).strip()
    assert "Traceback" not in output and output.startswith("DatasetNotFoundError: The aftraj dataset was not found")
    assert "-T data_dir=" in output and "places tried" in output
