"""The datasets the suite knows: where each is pinned, what marks its folder, and the user cache.

The lowest of the data modules: :mod:`blame.fetch` (download and verify) and :mod:`blame.paths`
(find) both import it, and it imports neither (``paths`` imports ``fetch``, never the reverse).
A new dataset is one more :class:`DatasetSource` in :data:`SOURCES` (and, if pinned, its entry in
``datasets_manifest.json``); fetching, locking and verification are generic over it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pooch

from blame.errors import DatasetNotFoundError

START_DIR = Path(os.getcwd())
"""The working directory when the suite was first imported: relative user paths start here.

``inspect eval`` changes into a task file's folder while it loads the task (``chdir_python`` in
``inspect_ai._eval.loader``), so the working directory seen by a task factory is ``tasks/``, not
the user's. Inspect imports the suite earlier, through its registry entry point, when it resolves
the model; this is the folder the command was started in (``tests/blame/test_fetch.py`` checks it
through the real command line). ``$PWD`` is not used: a program that starts ``inspect`` in another
folder (``subprocess.run(..., cwd=...)``) passes on its own, stale ``PWD``.
"""


@dataclass(frozen=True)
class DatasetSource:
    """One dataset: its folder name, env variable, pinned origin and the files that mark it.

    ``name`` is a Python identifier: it names the cache folder and CLI options, and having no
    ``-`` it keeps one dataset's ``.partial-<name>-*`` staging folders apart from another's.
    ``github`` is ``owner/repo`` (downloaded as the archive of ``revision``, the dataset being
    ``subfolder`` of it) or empty for a Hugging Face Hub dataset ``hub_repo``. ``read_globs`` are
    the files the loader reads (relative to the dataset folder): they are what the manifest pins.
    """

    name: str
    env_var: str
    markers: tuple[str, ...]
    remedy: str
    github: str = ""
    revision: str = ""
    subfolder: str = ""
    hub_repo: str = ""
    read_globs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"dataset name {self.name!r} is not a Python identifier")


WHO_AND_WHEN = DatasetSource(
    name="who_and_when",
    env_var="WHO_AND_WHEN_DIR",
    markers=("Hand-Crafted",),
    github="ag2ai/Agents_Failure_Attribution",
    revision="f4d2b6da464a826580e59b3a0eae15ea2d642d7c",
    subfolder="Who&When",
    read_globs=("Algorithm-Generated/*.json", "Hand-Crafted/*.json"),
    remedy="run `blame data fetch who_and_when`, or git clone https://github.com/ag2ai/Agents_Failure_Attribution "
    "(commit f4d2b6da464a826580e59b3a0eae15ea2d642d7c) and set WHO_AND_WHEN_DIR=<clone>/Who&When "
    "or pass -T data_dir=<clone>/Who&When",
)

BLAME = DatasetSource(
    name="blame",
    env_var="BLAME_DIR",
    markers=("benchmarks",),
    github="11inaki11/BLAME",
    revision="b5d4bdf39fa4d53fc05585e53d8f5aa10c4d7311",
    read_globs=("benchmarks/*/cases/*.json", "benchmarks/*/agents/*.json", "benchmarks/*/schema.md"),
    remedy="run `blame data fetch blame`, or git clone https://github.com/11inaki11/BLAME "
    "(commit b5d4bdf39fa4d53fc05585e53d8f5aa10c4d7311) and set BLAME_DIR=<clone> or pass -T data_dir=<clone>",
)

AFTRAJ = DatasetSource(
    name="aftraj",
    env_var="AFTRAJ_DIR",
    markers=("aftraj_safe.parquet", "aftraj_unsafe.parquet"),
    hub_repo="ZBox008003/AFTraj",
    remedy="pass -T data_dir=<folder> or set AFTRAJ_DIR=<folder>, a folder holding aftraj_safe.parquet and "
    "aftraj_unsafe.parquet made by `huggingface-cli download ZBox008003/AFTraj --repo-type dataset "
    "--revision <commit> --local-dir <folder>`; or run `blame data fetch aftraj --revision <commit>`",
)

SOURCES = {source.name: source for source in (WHO_AND_WHEN, BLAME, AFTRAJ)}


def user_path(value: str | os.PathLike[str], what: str) -> Path:
    """``value``, given by the user as ``what`` (e.g. "the data_dir argument"), as an absolute path:
    ``~`` and ``~user`` expanded, a relative path taken from :data:`START_DIR`. A ``~user`` that
    names no user is a one-line :class:`DatasetNotFoundError` (``Path.expanduser`` raises a bare
    ``RuntimeError``)."""
    try:
        path = Path(value).expanduser()
    except RuntimeError:
        head = Path(value).parts[0]
        why = f"this machine has no user {head[1:]!r}" if head != "~" else "the home folder is unknown (HOME is unset)"
        raise DatasetNotFoundError(f"{what} {str(value)!r}: cannot expand {head!r}: {why}; give the full path") from None
    return path if path.is_absolute() else START_DIR / path


def cache_root() -> Path:
    """``$BLAME_BENCH_CACHE`` (see :func:`user_path`), else the platform's user cache folder for blame-bench."""
    if os.environ.get("BLAME_BENCH_CACHE"):
        return user_path(os.environ["BLAME_BENCH_CACHE"], "BLAME_BENCH_CACHE")
    return Path(pooch.os_cache("blame-bench"))


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is set to 1, true, yes or on (any case)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def offline() -> bool:
    """Whether ``BLAME_BENCH_OFFLINE`` forbids every download."""
    return env_flag("BLAME_BENCH_OFFLINE")


def holds(source: DatasetSource, path: Path) -> bool:
    """Whether ``path`` holds one of ``source``'s marker files or folders."""
    return any((path / marker).exists() for marker in source.markers)
