"""`blame generate` and the `simulators.generate` API it calls: the command's folder, its summary line,
one-line refusals of every bad argument before any work, Ctrl-C, and model mode's Inspect options."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from blame.arguments import ArgumentError
from blame.trajectory_folder import load_trajectory_folder
from blame_bench.cli import main
from simulators import STAGING_BYTES, generate, systems


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def test_same_arguments_give_the_same_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Two runs with one seed write byte-identical folders that load; the summary line counts them."""
    argv = ["generate", "trading", "--sessions", "12", "--seed", "5", "--max-faults", "2"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    summary = capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    assert folder_digest(tmp_path / "a") == folder_digest(tmp_path / "b")
    trajectories = load_trajectory_folder(tmp_path / "a")
    safe = sum(t.label is None for t in trajectories)
    assert summary.out.startswith(f"blame generate: {len(trajectories)} sessions ({safe} verified-safe, ")
    assert "generating: 12/12 sessions" in summary.err


@pytest.mark.parametrize(("arguments", "named"), [
    (["nosuch", "--sessions", "3"], "system='nosuch'"),
    (["cortex", "--sessions", "0"], "sessions=0"),
    (["cortex", "--sessions", "100000000"], "from 1 to 20,000"),
    (["cortex", "--sessions", "3", "--seed", "-1"], "seed=-1"),
    (["cortex", "--sessions", "3", "--faults", "EXO-X,NOPE"], "faults="),
    (["cortex", "--sessions", "3", "--max-faults", "0"], "max_faults=0"),
    (["cortex", "--sessions", "3", "--safe-share", "1.5"], "safe_share=1.5"),
    (["cortex", "--sessions", "3", "--safe-share", "nan"], "safe_share=nan"),
    (["cortex", "--sessions", "3", "--mode", "modl"], "mode='modl'"),
    (["cortex", "--sessions", "3", "--mode", "model"], "model=None"),
    (["cortex", "--sessions", "3", "--model", "offline/random"], "--model needs --mode model"),
    (["cortex", "--sessions", "3", "--log-dir", "logs"], "--log-dir needs --mode model"),
    (["cortex", "--sessions", "3", "--max-attempts", "3"], "--max-attempts needs --mode model"),
    (["cortex", "--sessions", "3", "--mode", "model", "--model", ","], "expected one model"),
    (["cortex", "--sessions", "3", "--mode", "model", "--model", "nosuchprovider/x"], "nosuchprovider"),
])
def test_bad_arguments_are_one_line(arguments: list[str], named: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]):
    assert main(["generate", *arguments, "--out", str(tmp_path / "out")]) in (1, 2)
    err = capsys.readouterr().err.strip()
    assert err.startswith("blame generate: ") and "\n" not in err and named in err, err
    assert not (tmp_path / "out").exists()


def test_a_used_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("kept")
    assert main(["generate", "cortex", "--sessions", "2", "--out", str(tmp_path / "out")]) == 2
    assert "a new or empty folder" in capsys.readouterr().err
    assert (tmp_path / "out" / "x").read_text() == "kept"


def test_an_out_under_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "afile").write_text("")
    assert main(["generate", "cortex", "--sessions", "2", "--out", str(tmp_path / "afile" / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("blame generate: Invalid argument out=") and "is a file" in err and "\n" not in err, err


def _one_line_refusal(capsys: pytest.CaptureFixture[str], code: int, status: int = 2) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == status, captured
    assert err.startswith("blame generate: ") and "\n" not in err and "generating:" not in err, err
    return err


@pytest.mark.parametrize(("arguments", "named"), [
    (["--mode", "model", "--model", "offline/random,offline/first"], "expected one model"),
    (["--faults", "EXO-X,PT-X,EXO-X"], "(EXO-X repeated)"),
    (["--mode", "model", "--model", "offline/random", "--max-retries", "-1"], "max_retries=-1: expected an integer >= 0"),
    (["--mode", "model", "--model", "offline/random", "--timeout", "0"], "timeout=0: expected an integer >= 1"),
    (["--mode", "model", "--model", "offline/random", "-G", "temprature=1"], "-G temprature: not a generation setting"),
    (["--mode", "model", "--model", "offline/random", "-G", "temperature=hot"], "temperature='hot': expected a valid setting"),
    (["--mode", "model", "--model", "offline/random", "-G", "timeout=3", "--timeout", "4"], "both given"),
    (["--timeout", "30"], "--timeout needs --mode model"),
    (["--mix", "nope"], "mix='nope': expected None or one of blame"),
    (["--mix", "blame", "--mode", "model", "--model", "offline/random"], "a mix is drawn in template mode only"),
    (["-M", "seed=1"], "-M needs --mode model"),
    (["--mode", "model", "--model", "offline/random", "--log-dir", "a\0b"], "cannot hold a NUL byte"),
])
def test_more_bad_arguments_are_one_line_before_any_work(arguments: list[str], named: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]):
    """Several models (a generation is one model and one run), a repeated fault (it would weight
    the draw) and bad retry or timeout options are refused in one line, exit 2, nothing run."""
    code = main(["generate", "cortex", "--sessions", "2", *arguments, "--out", str(tmp_path / "out")])
    assert named in _one_line_refusal(capsys, code)
    assert not (tmp_path / "out").exists() and not (tmp_path / "logs").exists()


@pytest.mark.parametrize(("arguments", "named"), [
    (["cortex", "--sessions", "abc"], "argument --sessions: invalid int value: 'abc'"),
    (["cortex", "--sessions", "2", "--safe-share", "half"], "argument --safe-share: invalid float value: 'half'"),
    (["cortex"], "the following arguments are required: --sessions"),
    (["cortex", "--sessions", "2", "--mode", "model", "--model", "offline/random", "-M", "seed"], "takes KEY=VALUE"),
    (["cortex", "--sessions", "2", "--sesions", "5"], "unrecognized arguments: --sesions 5"),
])
def test_what_argparse_refuses_is_one_line_too(arguments: list[str], named: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exited:
        main(["generate", *arguments, "--out", str(tmp_path / "out")])
    assert named in _one_line_refusal(capsys, exited.value.code)
    assert not (tmp_path / "out").exists()


def _out_cases(tmp_path: Path) -> dict[str, tuple[str, str]]:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    limit = os.pathconf(tmp_path, "PC_NAME_MAX") - STAGING_BYTES
    return {
        "a 300-character name": (str(tmp_path / ("x" * 300)), "a folder name of at most"),
        "a name one byte too long": (str(tmp_path / ("y" * (limit + 1))), f"a folder name of at most {limit} bytes"),
        "a 300-character name under a missing folder": (str(tmp_path / "new" / ("x" * 300)), "a folder name of at most"),
        "a link to an empty folder": (str(tmp_path / "link"), "not a symbolic link"),
        "a dangling link": (str(tmp_path / "dangling"), "not a symbolic link"),
        "a NUL byte": (str(tmp_path / "a\0b"), "a path without NUL bytes"),
        "a path under a file": (str(tmp_path / "afile" / "x"), "is a file"),
    }


@pytest.mark.parametrize("case", ["a 300-character name", "a name one byte too long",
                                  "a 300-character name under a missing folder", "a link to an empty folder",
                                  "a dangling link", "a NUL byte", "a path under a file"])
def test_an_out_that_cannot_be_written_is_refused_before_any_session(case: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]):
    (tmp_path / "afile").write_text("")
    out, named = _out_cases(tmp_path)[case]
    code = main(["generate", "trading", "--sessions", "50", "--out", out])
    assert named in _one_line_refusal(capsys, code)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "dangling", "link", "real"]
    assert list((tmp_path / "real").iterdir()) == []


def test_the_longest_name_that_fits_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    name = "z" * (os.pathconf(tmp_path, "PC_NAME_MAX") - STAGING_BYTES)
    assert main(["generate", "trading", "--sessions", "1", "--out", str(tmp_path / name)]) == 0
    assert len(load_trajectory_folder(tmp_path / name)) == 1


@pytest.mark.parametrize(("arguments", "message"), [
    ({"out": None}, r"^Invalid argument out=None: expected the path of a new or empty folder"),
    ({"out": 12345}, r"^Invalid argument out=12345: expected the path of a new or empty folder"),
    ({"faults": [None]}, r"^Invalid argument faults=\[None\]: expected fault ids separated by commas"),
    ({"faults": ["EXO-X", "EXO-X"]}, r"^Invalid argument faults='EXO-X,EXO-X': expected each fault id once"),
    ({"faults": "EXO-X,NOPE"}, r"^Invalid argument faults='EXO-X,NOPE': expected fault ids of cortex"),
    ({"decisive_only": "false"}, r"^Invalid argument decisive_only='false': expected True or False"),
    ({"progress": "yes"}, r"^Invalid argument progress='yes': expected None or a function"),
    ({"log_dir": "logs"}, r"^Invalid argument log_dir='logs': expected nothing in template mode"),
    ({"max_attempts": 5}, r"^Invalid argument max_attempts=5: expected nothing in template mode"),
    ({"system": ["cortex"]}, r"^Invalid argument system=\['cortex'\]: expected one of cortex, trading"),
    ({"mode": "model", "model": "offline/random", "max_tries": 3}, r"^Invalid argument max_tries=3: expected an option of"),
    ({"mode": "model", "model": ["offline/random"]}, r"^Invalid argument model=\['offline/random'\]: expected a model name"),
])
def test_the_python_api_checks_its_arguments_as_the_command_does(arguments: dict, message: str, tmp_path: Path):
    """`simulators.generate` refuses what `blame generate` refuses, in the same one line, before
    any work (no folder), whatever Python type it is handed."""
    given = {"system": "cortex", "sessions": 2, "seed": 0, "out": tmp_path / "out", **arguments}
    with pytest.raises(ArgumentError, match=message) as raised:
        generate(**given)
    assert "\n" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_is_one_line_exit_130_and_leaves_no_folder(tmp_path: Path):
    """SIGINT while sessions are being generated: one line naming the interruption, exit 130, no
    traceback, and no --out folder (nor its hidden sibling)."""
    out = tmp_path / "out"
    command = [str(Path(sys.executable).parent / "blame"), "generate", "trading", "--sessions", "2000", "--out", str(out)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,  # SIGINT as a
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # terminal sends it
    first = process.stderr.readline()
    assert first.startswith("generating: "), first
    process.send_signal(signal.SIGINT)
    stdout, rest = process.communicate(timeout=60)
    lines = [line for line in (first + rest).splitlines() if not line.startswith("generating: ")]
    assert process.returncode == 130 and stdout == ""
    assert lines == [f"blame generate: interrupted (Ctrl-C); nothing written to {out}"]
    assert list(tmp_path.iterdir()) == []


def test_model_mode_passes_inspect_options_to_its_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """--max-retries, --timeout, --attempt-timeout, --max-connections, -M and -G reach the eval
    (its log records them); the summary line counts the requested sessions."""
    logs = tmp_path / "logs"
    code = main(["generate", "trading", "--sessions", "2", "--seed", "1", "--safe-share", "1", "--mode", "model",
                 "--model", "offline/first", "--max-attempts", "1", "--log-dir", str(logs), "--max-retries", "2",
                 "--timeout", "60", "--attempt-timeout", "20", "--max-connections", "3", "-M", "seed=7",
                 "-G", "temperature=0.5", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    [log] = [read_eval_log(info) for info in list_eval_logs(str(logs))]
    config = log.plan.config
    assert (config.max_retries, config.timeout, config.attempt_timeout, config.max_connections,
            config.temperature) == (2, 60, 20, 3, 0.5)
    assert log.eval.model_args == {"seed": 7}
    assert code in (0, 1), captured


def test_keeping_no_session_is_exit_1_with_the_reason_and_no_folder(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]):
    """A model whose every reply is unusable keeps nothing: one line with the reasons, exit 1, and
    no folder that the trajectories task would refuse."""
    code = main(["generate", "cortex", "--sessions", "2", "--mode", "model", "--model", "offline/invalid",
                 "--log-dir", str(tmp_path / "logs"), "--out", str(tmp_path / "out")])
    err = _one_line_refusal(capsys, code, status=1)
    assert "no session kept: all 2 sessions failed their checks within 2 attempts ({'unusable reply': 4})" in err, err
    assert not (tmp_path / "out").exists()


@contextmanager
def _failing_server() -> Iterator[str]:
    """An OpenAI-compatible address whose every request gets HTTP 500."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"error": {"message": "internal error", "type": "server_error"}}'
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_failing_server_ends_within_the_retries_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]):
    """Against a server answering HTTP 500, --max-retries 1 --timeout 20 ends the run with one
    line and exit 1 well within a minute (it ran on past 180 s without them); nothing written."""
    with _failing_server() as base_url:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        started = time.monotonic()
        code = main(["generate", "cortex", "--sessions", "1", "--mode", "model", "--model", "openai/gpt-4o",
                     "--max-retries", "1", "--timeout", "20", "--log-dir", str(tmp_path / "logs"),
                     "--out", str(tmp_path / "out")])
        elapsed = time.monotonic() - started
    err = _one_line_refusal(capsys, code, status=1)
    assert "the generation run ended with status error" in err and elapsed < 60, (err, elapsed)
    assert not (tmp_path / "out").exists()


def test_the_mix_option_draws_blames_fault_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """--mix blame reaches the generator: every faulty session holds one of BLAME's fault sets and
    the card states the mix."""
    assert main(["generate", "trading", "--sessions", "6", "--safe-share", "0", "--mix", "blame",
                 "--out", str(tmp_path / "out")]) == 0
    blame_sets = {tuple(group) for group in systems()["trading"].blame_mix}
    assert {tuple(t.label.fault_names) for t in load_trajectory_folder(tmp_path / "out")} <= blame_sets
    assert '"mix": "blame"' in (tmp_path / "out" / "README.md").read_text()


def test_the_help_names_every_registered_system(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """`blame generate --help` lists `simulators.systems()`, whatever is registered, not a fixed
    list; the module docstrings name no fixed list either."""
    import blame_bench.generate as command
    import simulators

    registered = simulators.systems()
    monkeypatch.setattr(simulators, "systems", lambda: {**registered, "newsys": registered["cortex"]})
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"a registered system: {', '.join([*registered, 'newsys'])}" in shown
    assert "cortex|trading" not in (command.__doc__ or "") + (simulators.__doc__ or "")


def test_the_streamed_folder_holds_what_the_generator_makes_in_memory(tmp_path: Path, monkeypatch):
    """``generate`` writes each session as it is kept (row groups of FolderWriter.CHUNK, here 4): the
    folder holds exactly generate_records' records and twins, the card their hash and the package version."""
    import pyarrow.parquet as pq
    from importlib.metadata import version

    from blame.trajectory_folder import FolderWriter
    from simulators.dataset import data_hash, generate_records

    monkeypatch.setattr(FolderWriter, "CHUNK", 4)
    twins: list = []
    records, summary = generate_records(systems()["trading"], 10, 4, twins=twins)
    assert generate("trading", 10, 4, tmp_path / "out") == summary
    assert load_trajectory_folder(tmp_path / "out") == records
    assert load_trajectory_folder(tmp_path / "out" / "clean_twins") == twins
    assert pq.ParquetFile(tmp_path / "out" / "data" / "test-00000-of-00001.parquet").num_row_groups == 3
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert f"data sha256: `{data_hash(records)}`" in card
    assert f"Generated by BLAME-bench {version('blame-bench')}, simulators 5 " in card

