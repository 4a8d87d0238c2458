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

AGENTRX_SESSIONS = tuple("""
08cae58d-4084-4616-b6dd-dd6534e4825b 0a65cb96-cb6e-4a6a-8aae-c1084f613456
0ec4371851b96837b0a81b3dd3df401415061bb532fbafeb4609f3337c358508 114d5fd0-e2ae-4b6d-a65a-870da2d19c08
14569e28-c88c-43e4-8c32-097d35b9a67d 16d825ff-1623-4176-a5b5-42e0f5c2b0ac 1f975693-876d-457b-a649-393859e79bf3
2aa5dd83fbcd0dce9a3dd4592106e5b5edf738008d932e357d477bba80e59ccf
2ddae3b7a208e3c25f14d82d7a1faaaa1832fbf950b4dac345e755c4c361f294 2dfc4c37-fec1-4518-84a7-10095d30ad75
3af8028c2a59e28ca88baff0e6d91f2a9f170c5ef91003f1c8406755a2760ad4 42576abe-0deb-4869-8c63-225c2d75a95a
42d4198c-5895-4f0a-b0c0-424a66465d83 52f7224e9c79431e7926afe317782711a0028750693e7456cde22ef6f4bd8bd5
557e78eceec08ca8b0da5f9fdaca6e1c7ec6140a8ce600983ee716327dab005e
55f4258484c5b398956133128a50462a767da211f8f72aa5ac5bbffb9bcbba1a 56137764-b4e0-45b8-9c52-1866420c3df5
57d9dc6935e8a40b02e7f8ec81768fe70e68a0c05f6866927c9fda38db38a486 5d0080cb-90d7-4712-bc33-848150e917d3
5f982798-16b9-4051-ab57-cfc7ebdb2a91 624cbf11-6a41-4692-af9c-36b3e5ca3130
6b06d186921b8b390c65aebd0d16f09f60a47d2f1288ebe36953f734e84c0a3c
6e3be83d1949fa52cba03fb1ce4b5b3bf7e37a83fd7d67694b10b2e439d90cf8 72c06643-a2fa-4186-aa5c-9ec33ae9b445
72e110e7-464c-453c-a309-90a95aed6538 73c1b9fe-ee1d-4cf4-96ca-35c08f97b054
748899d9d70c09beb3bd48ac8a3658bdcfd2f9114fe6dc4c4b8d2f9541ef4607
797f7a5b65ca28b7e7156e7db1e9f117bd4a021de0cd512bfdbb0be897d89eab 840bfca7-4f7b-481a-8794-c560c340185d
8ad84bd6fe38481ba49e7ad1f6fbd43219a999074e5c6fc940003281f55ec65b 8b3379c0-0981-4f5b-8407-6444610cb212
929b45f34805280d77c61d1e093e3d4e551d77ddb6ecd73552b12b1af286388d
9baaa267c95f9d8b75741ee9169c50563d297cfa592c20deaffd30dbc5984c74
9e31099fffa6a3891c94934fd4fc2f3f522d51c1904ff3561f3a10e4bf245821 a1e91b78-d3d8-4675-bb8d-62741b4b68a6
a3fbeb63-0e8c-4a11-bff6-0e3b484c3e9c a9074997e698f912b9e751779ea19c1e92fa148404e90e0ae997acea3f9559b0
b36ef2d8f2643b80e74a44ce3403f674ecb2aed7fd36afeaa289061a59feef92 b816bfce-3d80-4913-a07d-69b752ce6377
c7afe00869f98cf363fd83677ac41757ed5e57f03eacc3d1304feb0a92084bd1
ccec2229ced20a4b0cb4897e3a99120a3017ea030903e01c9bda6b13d40b0b14
e6bc98089608217e45b6956a46518fe3cce64a799b3ac43c6974c449ae14c408 ebbc1f13-d24d-40df-9068-adcf735b4240
f88066d274e265edd6cd9d61cd80a41accb3a14baf2297652fdd05cdf716d455
""".split())
"""The 44 Magentic-One sessions AgentRx annotates (the ``trajectory_id`` of its
``ground_truth/magentic_one_ground_truth.json``, which is Who&When's ``question_ID``): its loader
reads ``magentic_dataset/<id>.json`` for these only, so the manifest pins exactly these."""

AGENTRX = DatasetSource(
    name="agentrx",
    env_var="AGENTRX_DIR",
    markers=("ground_truth",),
    github="microsoft/AgentRx",
    revision="f228165bfec60a801fd5fedd9d8ffe0f9de0c69d",
    subfolder="data",
    read_globs=(
        "ground_truth/magentic_one_ground_truth.json",
        "ground_truth/tau_ground_truth.json",
        "tau_retail/tau_dataset_failed.json",
        "tau_retail/tau_dataset_full.json",
        *(f"magentic_dataset/{session}.json" for session in AGENTRX_SESSIONS),
    ),
    remedy="run `blame data fetch agentrx`, or git clone https://github.com/microsoft/AgentRx "
    "(commit f228165bfec60a801fd5fedd9d8ffe0f9de0c69d) and set AGENTRX_DIR=<clone>/data or pass -T data_dir=<clone>/data",
)

SOURCES = {source.name: source for source in (WHO_AND_WHEN, BLAME, AFTRAJ, AGENTRX)}


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
