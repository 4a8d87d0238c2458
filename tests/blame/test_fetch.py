"""Pinned, verified dataset downloads (blame.fetch, blame.paths, `blame data fetch`), offline.

Every test runs with an empty temporary ``BLAME_BENCH_CACHE``, the sibling ``../shared/`` hidden
(``BLAME_BENCH_NO_SIBLING=1``) and ``BLAME_BENCH_MIRROR`` pointed at a loopback server that serves
archives built from ``../shared/datasets`` in GitHub's layout (``tests/archive_server.py``).
The Hugging Face Hub path of AFTraj is tested with a mocked ``snapshot_download``.
"""

from __future__ import annotations

import concurrent.futures
import gc
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

import pytest
from archive_server import SHARED_DATASETS, ArchiveServer, archive_bytes, needs_shared
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log

from blame import fetch, sources
from blame.errors import DatasetNotFoundError
from blame.fetch import DatasetVerificationError, load_manifest, manifest_of
from blame.paths import AGENTRX, BLAME, SOURCES, WHO_AND_WHEN, provenance, resolve_dataset
from blame.who_and_when import load_who_and_when
from blame_bench.cli import main

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WW_ARCHIVE = f"/{WHO_AND_WHEN.github}/archive/{WHO_AND_WHEN.revision}.tar.gz"
AFTRAJ_REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def server():
    needs_shared()
    with ArchiveServer() as running:
        yield running


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: ArchiveServer) -> Path:
    """An empty cache, the sibling folder hidden, no dataset variables, the mirror on loopback."""
    folder = tmp_path / "cache"
    for variable in ("BLAME_BENCH_OFFLINE", "WHO_AND_WHEN_DIR", "BLAME_DIR", "AFTRAJ_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("BLAME_BENCH_CACHE", str(folder))
    monkeypatch.setenv("BLAME_BENCH_NO_SIBLING", "1")
    monkeypatch.setenv("BLAME_BENCH_MIRROR", server.url)
    server.truncate = False
    return folder


def entries(cache: Path) -> list[str]:
    """The cache's folders and files, without the lock files (which stay, by design)."""
    return sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock")) if cache.exists() else []


def test_manifest_pins_every_file_the_loaders_read_in_the_shared_copy():
    """The package manifest equals the sha256 of the files the loaders read in ../shared/datasets
    (184 Who&When logs; 15 + 6 BLAME cases, 15 agent files, 2 schemas; AgentRx's 2 annotation files,
    2 tau-bench run files and the 44 annotated Magentic-One sessions)."""
    needs_shared()
    manifest = load_manifest()
    assert len(manifest["who_and_when"]["files"]) == 184
    assert len(manifest["blame"]["files"]) == 38
    assert len(manifest["agentrx"]["files"]) == 48
    for source in (WHO_AND_WHEN, BLAME, AGENTRX):
        assert manifest[source.name]["revision"] == source.revision
        assert manifest_of(source, SHARED_DATASETS / source.name) == manifest[source.name]["files"]


def test_fetch_downloads_unpacks_verifies_and_then_uses_the_cache(cache: Path, server: ArchiveServer, capsys):
    """`blame data fetch` downloads the three archives once, installs verified folders with their
    origin recorded; a second fetch and every later load use the cache (no new request)."""
    before = len(server.requests)
    assert main(["data", "fetch"]) == 0
    assert len(server.requests) - before == 3
    out = capsys.readouterr()
    assert "blame-bench: downloading the who_and_when dataset" in out.err
    assert "who_and_when: verified: 184 files match" in out.out and "blame: verified: 38 files match" in out.out
    assert "agentrx: verified: 48 files match" in out.out
    assert entries(cache) == ["agentrx", "blame", "who_and_when"]  # no staging left
    record = json.loads((cache / "who_and_when" / fetch.SOURCE_RECORD).read_text())
    assert record["url"] == server.url + WW_ARCHIVE and record["revision"] == WHO_AND_WHEN.revision

    assert main(["data", "fetch"]) == 0
    assert "already in the cache" in capsys.readouterr().err
    assert len(load_who_and_when(None, "hand_crafted")) == 58
    assert len(server.requests) - before == 3
    found = provenance("who_and_when")
    assert found["origin"].startswith(f"downloaded from {server.url}{WW_ARCHIVE} at ")
    assert found["revision"] == WHO_AND_WHEN.revision and found["verification"].startswith("verified")


def test_first_use_downloads_by_itself(cache: Path, server: ArchiveServer, capsys):
    """With nothing anywhere, resolving a dataset downloads it, says so, and verifies it."""
    found = resolve_dataset(BLAME)
    assert Path(found.path) == cache / "blame" and found.verification.startswith("verified: 38 files")
    assert "downloading the blame dataset (11inaki11/BLAME@b5d4bdf39fa4)" in capsys.readouterr().err


def test_a_corrupted_cached_file_stops_the_next_run_naming_it(cache: Path):
    """One changed byte in a cached file: the next resolution stops, naming the file and the fix."""
    assert main(["data", "fetch", "blame"]) == 0
    case = cache / "blame" / "benchmarks" / "cortex" / "cases" / "cortex_session_10.json"
    case.write_bytes(case.read_bytes() + b"\n")
    with pytest.raises(DatasetVerificationError, match=rf"{case}: sha256 differs .*blame data fetch blame --force.*BLAME_DIR"):
        resolve_dataset(BLAME)
    assert main(["data", "fetch", "blame", "--force"]) == 0
    assert resolve_dataset(BLAME).verification.startswith("verified")


def test_an_archive_that_differs_from_the_manifest_fails_loudly(cache: Path, server: ArchiveServer):
    """A served archive with one changed file is refused, naming the file inside the archive and
    the remedy; nothing is left in the cache."""
    server.corrupt(WHO_AND_WHEN, "Hand-Crafted/7.json")
    try:
        inside = f"Agents_Failure_Attribution-{WHO_AND_WHEN.revision}/Who&When/Hand-Crafted/7.json: sha256 differs"
        with pytest.raises(DatasetVerificationError, match=rf"{inside} in the archive .*WHO_AND_WHEN_DIR"):
            resolve_dataset(WHO_AND_WHEN)
    finally:
        server.archives[WW_ARCHIVE] = archive_bytes(WHO_AND_WHEN)
    assert entries(cache) == []


def test_an_interrupted_download_leaves_no_half_dataset(cache: Path, server: ArchiveServer):
    """The connection closes halfway: a clear error, an empty cache; the next try succeeds."""
    server.truncate = True
    with pytest.raises(DatasetNotFoundError, match="Downloading the who_and_when dataset .* failed .*nothing was kept"):
        resolve_dataset(WHO_AND_WHEN)
    assert entries(cache) == []
    server.truncate = False
    assert resolve_dataset(WHO_AND_WHEN).verification.startswith("verified")


def test_an_archive_member_outside_its_folder_is_refused(cache: Path, server: ArchiveServer):
    """A member path with '..' is refused before anything is unpacked; nothing escapes or stays."""
    server.archives[WW_ARCHIVE] = archive_bytes(WHO_AND_WHEN, extra="../../escaped.txt")
    try:
        with pytest.raises(DatasetNotFoundError, match=r"unsafe archive member '\.\./\.\./escaped\.txt'"):
            resolve_dataset(WHO_AND_WHEN)
    finally:
        server.archives[WW_ARCHIVE] = archive_bytes(WHO_AND_WHEN)
    assert entries(cache) == [] and not (cache.parent / "escaped.txt").exists()


def test_offline_switch_and_unreachable_mirror(cache: Path, server: ArchiveServer, monkeypatch: pytest.MonkeyPatch):
    """BLAME_BENCH_OFFLINE=1 never downloads; an unreachable mirror fails with the remedy."""
    before = len(server.requests)
    monkeypatch.setenv("BLAME_BENCH_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError, match="No download was tried: BLAME_BENCH_OFFLINE is set"):
        resolve_dataset(BLAME)
    assert len(server.requests) == before
    monkeypatch.delenv("BLAME_BENCH_OFFLINE")
    monkeypatch.setenv("BLAME_BENCH_MIRROR", "http://127.0.0.1:9")
    with pytest.raises(DatasetNotFoundError, match="ConnectionError.*BLAME_BENCH_MIRROR.*git clone https://github.com/11inaki11/BLAME"):
        resolve_dataset(BLAME)
    assert entries(cache) == []


def test_blame_data_lists_every_dataset_found_missing_or_malformed(cache: Path, tmp_path: Path, capsys):
    """One folder per dataset; a malformed part is reported with its reason and the listing goes on."""
    assert main(["data", "fetch", "who_and_when"]) == 0
    capsys.readouterr()
    broken = tmp_path / "broken_blame"
    (broken / "benchmarks" / "cortex" / "cases").mkdir(parents=True)
    (broken / "benchmarks" / "cortex" / "cases" / "cortex_session_1.json").write_text("{not json")
    status = main(["data", "--blame-dir", str(broken), "--aftraj-dir", str(tmp_path / "nowhere"),
                   "--agentrx-dir", str(SHARED_DATASETS / "agentrx")])
    out, err = capsys.readouterr()
    assert status == 1
    assert "agentrx: found, data_dir argument: " in out and "verified: 48 files match" in out
    assert "  tau_retail: 29 trajectories\n  tau_retail_safe: 73 trajectories\n  magentic_one: 44 trajectories" in out
    assert f"who_and_when: found, downloaded from {os.environ['BLAME_BENCH_MIRROR']}" in out
    assert "  hand_crafted: 58 trajectories" in out
    assert f"blame: found, data_dir argument: {broken}; revision unknown; differs from the manifest" in out
    assert "  cortex: malformed: DataFormatError: " in err and "  trading: malformed: " in err
    assert "aftraj: missing. The aftraj dataset was not found: pass -T data_dir" in err


def _fake_snapshot_download(calls: list[dict]):
    from test_aftraj import CODE_TURNS, MATH_TURNS, row, write

    def snapshot_download(**kwargs):
        calls.append(kwargs)
        write(Path(kwargs["local_dir"]), [row("s1", "math", MATH_TURNS[:3], step=-1, agent="")],
              [row("u1", "coding", CODE_TURNS, step=1, agent="CodeWriter")])
        return kwargs["local_dir"]

    return snapshot_download


def test_aftraj_comes_from_the_hub_at_a_required_revision(cache: Path, monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path):
    """`blame data fetch aftraj` needs --revision; with it the (mocked) Hub download lands in the
    cache, the task finds it there, and the log records source, revision and 'unverified'."""
    import huggingface_hub

    calls: list[dict] = []
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fake_snapshot_download(calls))
    assert main(["data", "fetch", "aftraj"]) == 1
    assert "give the revision to pin, --revision" in capsys.readouterr().err
    assert main(["data", "fetch", "aftraj", "--revision", AFTRAJ_REVISION]) == 0
    [call] = calls
    assert (call["repo_id"], call["repo_type"], call["revision"]) == ("ZBox008003/AFTraj", "dataset", AFTRAJ_REVISION)
    from tasks.aftraj import aftraj

    [log] = inspect_eval(aftraj(), model="offline/random", limit=1, display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success" and len(log.samples) == 1
    record = log.eval.metadata["datasets"]["aftraj"]
    assert record["revision"] == AFTRAJ_REVISION and record["path"] == str(cache / "aftraj")
    assert record["origin"].startswith("downloaded from https://huggingface.co/datasets/ZBox008003/AFTraj")
    assert record["verification"] == "unverified: no pinned manifest for this dataset"


@pytest.mark.e2e
def test_fresh_machine_fetch_then_eval_each_benchmark(cache: Path, server: ArchiveServer, tmp_path: Path):
    """The CLI as a new user runs it: `blame data fetch`, then `inspect eval --limit 1` on each
    benchmark from the cache (no further download), each log naming its dataset's origin; then a
    corrupted cached file stops the next eval with a message naming it."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "10000"}
    fetched = subprocess.run(["blame", "data", "fetch"], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert fetched.returncode == 0, fetched.stderr
    requests = len(server.requests)

    def run(*tasks: str) -> subprocess.CompletedProcess[str]:
        command = ["inspect", "eval", *tasks, "--model", "offline/random", "--limit", "1",
                   "--log-dir", str(tmp_path / "logs"), "--display", "plain"]  # `none` hides the error
        return subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=300)

    result = run("tasks/who_and_when.py", "tasks/blame_cortex.py", "tasks/blame_trading.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    logs = {log.eval.task: log for log in map(read_eval_log, list_eval_logs(str(tmp_path / "logs")))}
    assert sorted(logs) == ["blame_cortex", "blame_trading", "who_and_when"]
    for task, log in logs.items():
        assert log.status == "success" and len(log.samples) == 1
        record = log.eval.metadata["datasets"]["who_and_when" if task == "who_and_when" else "blame"]
        assert record["origin"].startswith(f"downloaded from {server.url}/") and record["verification"].startswith("verified")
    assert len(server.requests) == requests

    schema = cache / "blame" / "benchmarks" / "cortex" / "schema.md"
    schema.write_text(schema.read_text() + "tampered\n")
    result = run("tasks/blame_cortex.py")
    assert result.returncode != 0
    assert f"{schema}: sha256 differs" in result.stdout + result.stderr


def _env(**extra: str) -> dict[str, str]:
    """This process's environment (cache, mirror, no sibling) with the venv's commands on PATH."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "10000", **extra}


def test_four_processes_fetching_one_dataset_share_one_download(cache: Path, server: ArchiveServer):
    """Four `blame data fetch blame` started together on one empty cache: all exit 0, one archive
    request (the others wait on the dataset's lock and accept the verified copy), the copy
    verifies, no staging folder remains."""
    server.delay = 1.0  # the first download is still running when the others ask
    before = len(server.requests)
    try:
        runs = [subprocess.Popen(["blame", "data", "fetch", "blame"], env=_env(), cwd=REPO, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
        results = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    finally:
        server.delay = 0.0
    assert [code for code, _, _ in results] == [0] * 4, results
    assert len(server.requests) - before == 1
    assert sum("already in the cache" in err for _, _, err in results) == 3
    assert all("blame: verified: 38 files match" in out for _, out, _ in results)
    assert fetch.verify(BLAME, cache / "blame").ok
    assert entries(cache) == ["blame"]


def test_a_killed_fetch_leaves_a_partial_that_the_next_fetch_removes(cache: Path, server: ArchiveServer, capsys):
    """A fetch killed mid-download (SIGKILL) leaves its `.partial-blame-*`; a fetch started while
    it still ran waits for its lock (and leaves the partial alone), then, its owner gone, removes
    it and installs a verified copy."""
    server.delay = 30.0
    first = subprocess.Popen(["blame", "data", "fetch", "blame"], env=_env(), cwd=REPO,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        before = len(server.requests)
        deadline = time.monotonic() + 60
        while len(server.requests) == before and time.monotonic() < deadline:  # the first is downloading
            time.sleep(0.05)
        [partial] = list(cache.glob(".partial-blame-*"))
        server.delay = 0.0
        second = concurrent.futures.ThreadPoolExecutor(1).submit(fetch.fetch_github, BLAME, False)
        time.sleep(0.5)
        assert not second.done() and partial.exists()  # a live owner's partial is kept
    finally:
        first.kill()
        first.wait()
    assert second.result(timeout=60) == cache / "blame"
    assert not partial.exists() and entries(cache) == ["blame"]
    assert fetch.verify(BLAME, cache / "blame").ok
    assert "waiting for another process that is fetching the blame dataset" in capsys.readouterr().err


def test_offline_fetch_is_refused_in_one_line_without_a_request(cache: Path, server: ArchiveServer,
                                                                monkeypatch: pytest.MonkeyPatch, capsys):
    """`BLAME_BENCH_OFFLINE=1 blame data fetch` (and the Hub fetch) make no request: one line
    naming the variable, exit status 1, nothing in the cache."""
    import huggingface_hub

    before = len(server.requests)
    monkeypatch.setenv("BLAME_BENCH_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _fake_snapshot_download(calls := []))
    for argv in (["data", "fetch"], ["data", "fetch", "blame", "--force"], ["data", "fetch", "aftraj", "--revision", "v1"]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("blame data fetch: BLAME_BENCH_OFFLINE=1 forbids downloads")
    assert len(server.requests) == before and calls == [] and entries(cache) == []


def test_an_edited_source_record_does_not_change_the_logged_revision(cache: Path):
    """The revision reported (and logged) for a verified cached copy is the manifest's, whatever
    its .blame-bench-source.json says; the origin says the record was ignored."""
    assert main(["data", "fetch", "blame"]) == 0
    record_path = cache / "blame" / fetch.SOURCE_RECORD
    record = json.loads(record_path.read_text())
    record_path.write_text(json.dumps({**record, "revision": "0" * 40}))
    found = resolve_dataset(BLAME)
    assert found.revision == BLAME.revision == load_manifest()["blame"]["revision"]
    assert found.verification.startswith("verified") and f"names revision '{'0' * 40}'" in found.origin
    assert provenance("blame")["revision"] == BLAME.revision


def test_blame_data_names_every_file_of_a_cached_copy_that_fails_verification(cache: Path, capsys):
    """`blame data` reports a damaged cached copy as failing verification (not "missing"), naming
    each file and what is wrong, and exits 1."""
    assert main(["data", "fetch", "blame"]) == 0
    cases = cache / "blame" / "benchmarks" / "cortex" / "cases"
    (cases / "cortex_session_10.json").write_text("{}")
    (cases / "cortex_session_100.json").unlink()
    capsys.readouterr()
    assert main(["data"]) == 1
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if line.startswith("blame: "))
    assert line.startswith("blame: in the cache but fails verification: ")
    assert f"{cases / 'cortex_session_100.json'}: missing; {cases / 'cortex_session_10.json'}: sha256 differs" in line


def test_an_archive_check_reports_every_missing_file_and_a_wrong_top_folder(cache: Path, server: ArchiveServer):
    """An archive without three pinned files names all three; one whose top folder is not
    `<repo>-<commit>/` says so and what it holds. Nothing is kept either way."""
    omitted = ("benchmarks/cortex/agents/chief.json", "benchmarks/cortex/schema.md", "benchmarks/trading_agents/cases/trading_session_2.json")
    url = f"/{BLAME.github}/archive/{BLAME.revision}.tar.gz"
    top = f"BLAME-{BLAME.revision}"
    try:
        server.archives[url] = archive_bytes(BLAME, omit=omitted)
        with pytest.raises(DatasetVerificationError) as raised:
            fetch.fetch_github(BLAME, progress=False)
        assert all(f"{top}/{name}: missing" in str(raised.value) for name in omitted)
        server.archives[url] = archive_bytes(BLAME, top="BLAME-main")
        with pytest.raises(DatasetVerificationError, match=rf"has no folder {top}/ \(its top level holds BLAME-main/\)"):
            fetch.fetch_github(BLAME, progress=False)
    finally:
        server.archives[url] = archive_bytes(BLAME)
    assert entries(cache) == []


def test_a_failed_download_prints_its_error_on_a_line_of_its_own(cache: Path, server: ArchiveServer,
                                                                 monkeypatch: pytest.MonkeyPatch, capsys):
    """The progress bar of a download cut off halfway ends its line before the error is printed,
    and is not drawn again afterwards."""
    server.truncate = True
    assert main(["data", "fetch", "who_and_when"]) == 1
    gc.collect()  # a bar left open would redraw itself when collected
    err = capsys.readouterr().err
    assert "B/s" in err  # the bar was drawn
    bar, error = err.split("who_and_when: Downloading the who_and_when dataset", 1)
    assert bar.endswith("\n") and "\n" not in error.rstrip("\n") and "\r" not in error
    assert capsys.readouterr().err == ""


def test_readme_counts_of_pinned_files_come_from_the_manifest():
    """README's *Data* table states, for each pinned dataset, its number of files and then the
    count for each of the loader's globs (``read_globs``), as the manifest has them; globs that
    name one file each count together by folder (AgentRx's 44 sessions are 44 such globs)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name, pinned in load_manifest().items():
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        stated = re.search(r"sha256 of its (\d+) files: ([^|]*)\|", row)
        assert stated, row
        groups: dict[str, list[str]] = {}
        for glob in SOURCES[name].read_globs:
            literal = not any(c in glob for c in "*?[")
            groups.setdefault(str(PurePosixPath(glob).parent) + "/" if literal else glob, []).append(glob)
        per_glob = [sum(any(PurePosixPath(f).match(g) for g in globs) for f in pinned["files"]) for globs in groups.values()]
        assert int(stated[1]) == len(pinned["files"]) == sum(per_glob)
        assert [int(n) for n in re.findall(r"\d+", stated[2])] == per_glob, row


def test_user_paths_expand_safely_and_start_from_the_users_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """An unknown `~user` in data_dir, WHO_AND_WHEN_DIR or `blame data --who-and-when-dir` is one
    line naming the argument; a relative data_dir starts from the folder the command was started
    in (not the current one, which Inspect changes while loading a task) and errors show it
    absolute."""
    for variable in ("WHO_AND_WHEN_DIR", "BLAME_DIR", "AFTRAJ_DIR"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(DatasetNotFoundError, match=r"^The data_dir argument '~nosuchuser/ww': cannot expand '~nosuchuser': "
                       r"this machine has no user 'nosuchuser'; give the full path$"):
        resolve_dataset(WHO_AND_WHEN, "~nosuchuser/ww")
    monkeypatch.setenv("WHO_AND_WHEN_DIR", "~nosuchuser/x")
    with pytest.raises(DatasetNotFoundError, match="^WHO_AND_WHEN_DIR '~nosuchuser/x': cannot expand"):
        load_who_and_when(None, "hand_crafted")
    monkeypatch.delenv("WHO_AND_WHEN_DIR")
    assert main(["data", "--who-and-when-dir", "~nosuchuser/x"]) == 1
    assert "who_and_when: missing. --who-and-when-dir '~nosuchuser/x': cannot expand '~nosuchuser'" in capsys.readouterr().err

    monkeypatch.setattr(sources, "START_DIR", tmp_path)
    monkeypatch.chdir(REPO / "tasks")
    with pytest.raises(DatasetNotFoundError, match=rf"data_dir argument: {tmp_path}/nowhere$"):
        resolve_dataset(BLAME, "nowhere")


@pytest.mark.e2e
def test_inspect_eval_data_dir_paths(tmp_path: Path):
    """Through the real `inspect eval`, run from the repository root: `-T data_dir=~nosuchuser/ww`
    stops with one line (no traceback); `-T data_dir=../shared/datasets/blame` is found from the
    repository root, not from tasks/ (and $PWD, stale here, is not what is used)."""
    needs_shared()

    def run(data_dir: str) -> subprocess.CompletedProcess[str]:
        command = ["inspect", "eval", "tasks/blame_cortex.py", "-T", f"data_dir={data_dir}", "--model", "offline/random",
                   "--limit", "1", "--log-dir", str(tmp_path / "logs"), "--display", "plain"]  # `none` hides the error
        return subprocess.run(command, env=_env(PWD="/"), cwd=REPO, capture_output=True, text=True, timeout=300)

    bad = run("~nosuchuser/ww")
    output = bad.stdout + bad.stderr
    assert bad.returncode != 0
    assert [line for line in output.splitlines() if "nosuchuser" in line] == [
        "DatasetNotFoundError: The data_dir argument '~nosuchuser/ww': cannot expand '~nosuchuser': "
        "this machine has no user 'nosuchuser'; give the full path"
    ], output
    assert "Traceback" not in output and "RuntimeError" not in output

    good = run(os.path.relpath(SHARED_DATASETS / "blame", REPO))
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-3000:]
    [log] = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"))]
    assert log.status == "success"
    assert Path(log.eval.metadata["datasets"]["blame"]["path"]).resolve() == (SHARED_DATASETS / "blame").resolve()
