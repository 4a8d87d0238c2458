"""Where the datasets are found, and where each found copy came from.

Resolution order for each dataset (the first folder holding one of its marker files wins):

1. the explicit ``data_dir`` argument (task argument ``-T data_dir=...``);
2. the environment variable (``WHO_AND_WHEN_DIR``, ``BLAME_DIR``, ``AFTRAJ_DIR`` or ``AGENTRX_DIR``);
3. the user cache, ``$BLAME_BENCH_CACHE`` or the platform's cache folder (``~/.cache/blame-bench``
   on Linux) + ``/<name>``: filled by ``blame data fetch`` or by the automatic download below;
4. the sibling folder ``../shared/datasets/<name>`` of the repository checkout (tests and CI;
   ``BLAME_BENCH_NO_SIBLING=1`` hides it);
5. a download of the pinned source into the user cache (GitHub datasets only; never when
   ``BLAME_BENCH_OFFLINE=1``), see :mod:`blame.fetch`.

Paths the user gives (``data_dir``, the variables, ``BLAME_BENCH_CACHE``) go through
:func:`blame.sources.user_path`: ``~`` and ``~user`` are expanded (an unknown user is a one-line
error), and a relative path is taken from the folder the command was started in, not from
``tasks/``, where Inspect loads a task. Every place is shown as an absolute path.

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

from blame import fetch
from blame.errors import DatasetNotFoundError
from blame.sources import AFTRAJ, AGENTRX, BLAME, SOURCES, WHO_AND_WHEN, DatasetSource, cache_root, env_flag, holds, offline, user_path

# the datasets are re-exported: loaders, tasks and tests import them from here
__all__ = ["AFTRAJ", "AGENTRX", "BLAME", "SOURCES", "WHO_AND_WHEN", "DatasetSource", "Resolved", "cache_root", "provenance",
           "resolve_data_dir", "resolve_dataset"]

REPO_ROOT = Path(__file__).resolve().parent.parent


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


def candidate_dirs(source: DatasetSource, data_dir: str | Path | None = None) -> list[tuple[str, Path]]:
    """Every folder looked at for ``source``, in order, labelled by where it comes from."""
    if data_dir:
        return [("data_dir argument", user_path(data_dir, "The data_dir argument"))]
    if os.environ.get(source.env_var):
        return [(f"${source.env_var}", user_path(os.environ[source.env_var], source.env_var))]
    places = [("user cache", cache_root() / source.name)]
    if not env_flag("BLAME_BENCH_NO_SIBLING"):
        places.append(("shared datasets folder", REPO_ROOT.parent / "shared" / "datasets" / source.name))
    return places


def resolve_dataset(source: DatasetSource, data_dir: str | Path | None = None, download: bool = True) -> Resolved:
    """Find ``source`` (downloading it if allowed and nowhere else), verify it and record it."""
    places = candidate_dirs(source, data_dir)
    found = next(((label, path) for label, path in places if holds(source, path)), None)
    if found is None:
        explicit = bool(data_dir or os.environ.get(source.env_var))
        if explicit or not download or not source.github or offline():
            raise not_found(source, places, data_dir)
        found = ("user cache", fetch.fetch_github(source, progress=sys.stderr.isatty()))
    label, path = found
    check = fetch.verify_cached(source) if label == "user cache" else fetch.verify(source, path)
    if label == "user cache" and not check.ok:
        raise fetch.verification_error(source, path, check)
    origin = fetch.cached_origin(path, check) if label == "user cache" else f"{label}: {path}"
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
    if source.github and not (data_dir or os.environ.get(source.env_var)) and offline():
        reason = "\nNo download was tried: BLAME_BENCH_OFFLINE is set."
    return DatasetNotFoundError(
        f"The {source.name} dataset was not found{given}: {source.remedy}.\n"
        f"Looked for a folder containing {markers}; places tried, in order:\n{tried}{reason}"
    )
