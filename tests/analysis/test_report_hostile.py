"""`blame report` on a log whose strings are hostile: whatever a log supplies reaches report.md as
data, never as Markdown structure or shell syntax. The task file and the ``-T`` keys are quoted
like the values (a pasted command runs exactly the logged values, nothing more), every command is
one line inside a fence that nothing in it can close, a method, model or task name holding line
breaks starts no heading, and a log whose end precedes its start has an unknown wall time."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from analysis._format import one_line, shell_word
from blame_bench.cli import main

TASK_FILE = "tasks/x.py; touch pwned #\n```\n# Injected by the task file"
KEY = "x;touch pwned;y"
METHOD = "all_at_once\n# Injected by the method"
MODEL = "offline/first\u2028# Injected by the model"
FOLDER = "hostile logs; touch pwned"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """report.md of one all_at_once log on 2 CORTEX cases, edited: task file, a task argument key,
    the model, every attribution's method, and a completion time before the start time; and a copy
    whose solver argument value (which then names the protocol) holds a line break."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    from solvers.all_at_once import all_at_once
    from tasks.blame_cortex import blame_cortex

    root = tmp_path_factory.mktemp("hostile_report")
    [log] = inspect_eval(blame_cortex(), solver=all_at_once(), model="offline/first", limit=2, display="none",
                         log_dir=str(root / "made"))
    log = read_eval_log(log.location)
    log.eval.task_file, log.eval.model = TASK_FILE, MODEL
    log.eval.task_args = {**log.eval.task_args, KEY: "v"}
    log.stats.started_at, log.stats.completed_at = "2026-01-02T10:00:00+00:00", "2026-01-02T09:00:00+00:00"
    for sample in log.samples:
        attribution = json.loads(sample.store["attribution"]) | {"method": METHOD}
        sample.store["attribution"] = sample.output.completion = json.dumps(attribution)
    (root / "logs").mkdir()
    write_eval_log(log, str(root / "logs" / Path(log.location).name))
    for step in log.plan.steps:  # a second configuration: an argument value that names the protocol
        step.params["max_log_chars"] = "3000\n# Injected by an argument"
    log.eval.solver_args = {**(log.eval.solver_args or {}), "max_log_chars": "3000\n# Injected by an argument"}
    log.eval.eval_id = log.eval.eval_id + "x"
    write_eval_log(log, str(root / "logs" / ("second-" + Path(log.location).name)))
    logs = root / "logs"
    hostile = root / FOLDER
    logs.rename(hostile)
    assert main(["report", str(hostile), "--out", str(root / "out"), "--baseline", one_line(METHOD), "--no-figures",
                 "--quiet"]) == 0
    return (root / "out" / "report.md").read_text(encoding="utf-8")


def test_no_log_string_starts_a_heading_or_a_line(report: str) -> None:
    assert "Injected" in report  # the names are shown ...
    for line in report.splitlines():  # ... but never at the start of a line (a heading, an item, a quote)
        assert not line.lstrip("#>-* ").startswith("Injected"), line
    assert "all_at_once\\n# Injected by the method" in report and "offline/first\\u2028# Injected" in report
    assert "[max_log_chars=3000\\n# Injected by an argument]" in report  # the protocol's name


def _block(report: str) -> list[str]:
    """The lines of the reproduction block, between its opening fence and the line that closes it."""
    lines = report[report.index("Commands that reproduce it"):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    fence = lines[start]
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(fence))
    return lines[start + 1:end]


def _bash_words(line: str, cwd: Path) -> list[str]:
    """The words bash reads in a command line (it runs ``set --`` on them, in ``cwd``: an unquoted
    ``;`` in the line would run what follows, and leave a file there)."""
    result = subprocess.run(["bash", "-c", f"set -- {line}\nprintf '%s\\0' \"$@\""], cwd=cwd, capture_output=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode().split("\0")[:-1]


def test_the_reproduction_block_quotes_every_word_a_log_supplies(report: str, tmp_path: Path) -> None:
    block = _block(report)
    assert len(block) == 3, block
    report_words = _bash_words(block[0], tmp_path)
    assert report_words[:2] == ["blame", "report"] and report_words[2].endswith("/" + FOLDER)
    argument = "max_log_chars=3000\n# Injected by an argument"
    for line in block[1:]:
        words = _bash_words(line, tmp_path)
        assert words[:3] == ["inspect", "eval", TASK_FILE] and words[words.index("--model") + 1] == MODEL
        assert words[words.index(f"{KEY}=v") - 1] == "-T"
    assert argument in _bash_words(block[2], tmp_path)
    assert not list(tmp_path.iterdir())  # nothing ran: no file made


def test_an_end_before_the_start_is_an_unknown_wall_time(report: str) -> None:
    assert ("- Wall time: – minutes summed over 0 log(s) (each log's start to end); unknown for 2 (a start or end "
            "missing, or the end before the start).") in report


@pytest.mark.parametrize(("text", "word"), [
    ("tasks/a b.py", "'tasks/a b.py'"),
    ("it's", "'it'\"'\"'s'"),
    ("a\nb", "$'a\\x0ab'"),
    ("x'\\\u2028", "$'x\\'\\\\\\U00002028'"),
])
def test_shell_word_is_one_line_and_bash_reads_it_back(text: str, word: str) -> None:
    """Hand-written expectations; bash's ANSI-C quoting reads each back as ``text``."""
    import subprocess

    assert shell_word(text) == word and "\n" not in word
    assert subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True).stdout == text


def test_one_line_escapes_every_line_break() -> None:
    assert one_line("a\nb\rc\u2028d\x85e\x1cf") == "a\\nb\\rc\\u2028d\\x85e\\x1cf"
    assert len(one_line("".join(chr(c) for c in range(0x3000))).splitlines()) == 1


def test_a_benchmark_given_two_outcomes_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--metric`` twice for one benchmark used to keep one of them without a word; the same
    outcome twice is no conflict."""
    from analysis.outcomes import parse_metric_args
    from blame_bench.cli import main

    argv = ["report", str(tmp_path), "--out", str(tmp_path / "out"),
            "--metric", "blame/cortex=vector.exact", "--metric", "blame/cortex=attribution.agent"]
    assert main(argv) == 1
    assert capsys.readouterr().err == ("blame report: --metric blame/cortex=... given twice (vector.exact and "
                                       "attribution.agent): give one outcome per benchmark\n")
    assert parse_metric_args(["a=x.y", "a=x.y", "b=x.z"]) == {"a": "x.y", "b": "x.z"}
