"""Where the datasets are found, and where each found copy came from.

Resolution order for each dataset (the first folder holding one of its marker files wins):

1. the explicit ``data_dir`` argument (task argument ``-T data_dir=...``);
2. the environment variable (``WHO_AND_WHEN_DIR``, ``BLAME_DIR`` or ``AFTRAJ_DIR``);
3. the user cache, ``$BLAME_BENCH_CACHE`` or the platform's cache folder (``~/.cache/blame-bench``
   on Linux) + ``/<name>``: filled by ``blame data fetch`` or by the automatic download below;
4. the sibling folder ``../shared/datasets/<name>`` of the repository checkout (tests and CI;
   ``BLAME_BENCH_NO_SIBLING=1`` hides it);
5. a download of the pinned source into the user cache (GitHub datasets only; never when
   ``BLAME_BENCH_OFFLINE=1``), see :mod:`blame.fetch`.

An explicit choice is never silently overridden: if ``data_dir`` is given, or the environment
variable is set, and that folder does not hold the dataset, resolution stops there. A missing
dataset raises :class:`DatasetNotFoundError` naming every place tried and how to get the data.
Every resolution is checked against the package's sha256 manifest (:func:`blame.fetch.verify`): a
cached copy that differs stops with the file named; a folder the user chose, or the sibling
folder, is used as it is and the difference recorded. The last resolution of each dataset is
kept (:func:`provenance`) so that tasks can write it into the eval log.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pooch

from blame.errors import DatasetNotFoundError

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class DatasetSource:
    """One dataset: its folder name, env variable, pinned origin and the files that mark it.

    ``github`` is ``owner/repo`` (downloaded as the archive of ``revision``, the dataset being
    ``subfolder`` of it) or empty for a Hugging Face Hub dataset ``hub_repo``. ``read_globs``
    are the files the loader reads (relative to the dataset folder): they are what the manifest
    pins.
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


@dataclass(frozen=True)
class Resolved:
    """A found dataset: its folder, where it came from, its revision and whether it verified."""

    name: str
    path: str
    origin: str
    revision: str
    verification: str

    def as_metadata(self) -> dict[str, str]:
        return asdict(self)


_LAST: dict[str, Resolved] = {}


def cache_root() -> Path:
    """``$BLAME_BENCH_CACHE``, else the platform's user cache folder for blame-bench."""
    return Path(os.environ.get("BLAME_BENCH_CACHE") or pooch.os_cache("blame-bench")).expanduser()


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def candidate_dirs(source: DatasetSource, data_dir: str | Path | None = None) -> list[tuple[str, Path]]:
    """Every folder looked at for ``source``, in order, labelled by where it comes from."""
    if data_dir:
        return [("data_dir argument", Path(data_dir).expanduser())]
    if os.environ.get(source.env_var):
        return [(f"${source.env_var}", Path(os.environ[source.env_var]).expanduser())]
    places = [("user cache", cache_root() / source.name)]
    if not _flag("BLAME_BENCH_NO_SIBLING"):
        places.append(("shared datasets folder", REPO_ROOT.parent / "shared" / "datasets" / source.name))
    return places


def holds(source: DatasetSource, path: Path) -> bool:
    """Whether ``path`` holds one of ``source``'s marker files or folders."""
    return any((path / marker).exists() for marker in source.markers)


def resolve_dataset(source: DatasetSource, data_dir: str | Path | None = None, download: bool = True) -> Resolved:
    """Find ``source`` (downloading it if allowed and nowhere else), verify it and record it."""
    from blame import fetch  # fetch needs DatasetSource and cache_root from here

    places = candidate_dirs(source, data_dir)
    found = next(((label, path) for label, path in places if holds(source, path)), None)
    if found is None:
        explicit = bool(data_dir or os.environ.get(source.env_var))
        if explicit or not download or not source.github or _flag("BLAME_BENCH_OFFLINE"):
            raise not_found(source, places, data_dir)
        found = ("user cache", fetch.fetch_github(source, progress=sys.stderr.isatty()))
    label, path = found
    check = fetch.verify(source, path)
    if label == "user cache" and not check.ok:
        raise fetch.verification_error(source, path, check)
    origin = fetch.cached_origin(path) if label == "user cache" else f"{label}: {path}"
    resolved = Resolved(source.name, str(path), origin, fetch.revision_of(source, path, check), check.status)
    _LAST[source.name] = resolved
    return resolved


def resolve_data_dir(source: DatasetSource, data_dir: str | Path | None = None) -> Path:
    """The folder of ``source`` (see :func:`resolve_dataset`)."""
    return Path(resolve_dataset(source, data_dir).path)


def provenance(name: str) -> dict[str, str] | None:
    """The last resolution of dataset ``name`` in this process, as log metadata (None if none)."""
    resolved = _LAST.get(name)
    return resolved.as_metadata() if resolved else None


def not_found(source: DatasetSource, places: list[tuple[str, Path]], data_dir: str | Path | None) -> DatasetNotFoundError:
    given = "" if data_dir else " (no data_dir given)"
    tried = "\n".join(f"  - {label}: {path}" for label, path in places)
    markers = " or ".join(f"'{m}'" for m in source.markers)
    reason = ""
    if source.github and not (data_dir or os.environ.get(source.env_var)) and _flag("BLAME_BENCH_OFFLINE"):
        reason = "\nNo download was tried: BLAME_BENCH_OFFLINE is set."
    return DatasetNotFoundError(
        f"The {source.name} dataset was not found{given}: {source.remedy}.\n"
        f"Looked for a folder containing {markers}; places tried, in order:\n{tried}{reason}"
    )
