"""Where the datasets are found.

Resolution order for each dataset (the first existing folder wins):

1. the explicit ``data_dir`` argument (task argument ``-T data_dir=...``);
2. the environment variable (``WHO_AND_WHEN_DIR`` or ``BLAME_DIR``);
3. the user cache, ``$BLAME_BENCH_CACHE`` or ``~/.cache/blame-bench/<name>`` (filled by cloning
   the public repository there, see the error message);
4. the sibling folder ``../shared/datasets/<name>`` of the repository checkout (tests and CI).

An explicit choice is never silently overridden: if ``data_dir`` is given, or the environment
variable is set, and that folder does not hold the dataset, resolution stops there with an error
instead of falling back to the cache or the shared folder. A missing dataset raises
:class:`DatasetNotFoundError` naming every place that was tried and how to get the data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from blame.errors import DatasetNotFoundError

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class DatasetSource:
    """How to find one dataset: its folder name, env variable, origin and a file it must hold."""

    name: str
    env_var: str
    repository: str
    revision: str
    clone_subfolder: str
    marker: str


WHO_AND_WHEN = DatasetSource(
    name="who_and_when",
    env_var="WHO_AND_WHEN_DIR",
    repository="https://github.com/ag2ai/Agents_Failure_Attribution",
    revision="f4d2b6da464a826580e59b3a0eae15ea2d642d7c",
    clone_subfolder="Who&When",
    marker="Hand-Crafted",
)

BLAME = DatasetSource(
    name="blame",
    env_var="BLAME_DIR",
    repository="https://github.com/11inaki11/BLAME",
    revision="cf08128 / d51b6ac / b5d4bdf",
    clone_subfolder="",
    marker="benchmarks",
)


def cache_root() -> Path:
    return Path(os.environ.get("BLAME_BENCH_CACHE", Path.home() / ".cache" / "blame-bench"))


def candidate_dirs(source: DatasetSource, data_dir: str | Path | None = None) -> list[tuple[str, Path]]:
    """Every place looked at for ``source``, in order, with a label saying where it came from."""
    places: list[tuple[str, Path]] = []
    if data_dir:
        places.append(("data_dir argument", Path(data_dir).expanduser()))
    if os.environ.get(source.env_var):
        places.append((f"${source.env_var}", Path(os.environ[source.env_var]).expanduser()))
    places.append(("user cache", cache_root() / source.name))
    places.append(("shared datasets folder", REPO_ROOT.parent / "shared" / "datasets" / source.name))
    return places


def resolve_data_dir(source: DatasetSource, data_dir: str | Path | None = None) -> Path:
    """The first candidate folder that holds ``source.marker``; raises with every place tried."""
    places = candidate_dirs(source, data_dir)
    if data_dir or os.environ.get(source.env_var):
        places = places[:1]  # the user chose this folder: never fall back past it
    for _, path in places:
        if (path / source.marker).exists():
            return path
    tried = "\n".join(f"  - {label}: {path}" for label, path in places)
    subfolder = f"/{source.clone_subfolder}" if source.clone_subfolder else ""
    raise DatasetNotFoundError(
        f"The {source.name} dataset was not found (looked for a folder containing "
        f"'{source.marker}'). Places tried, in order:\n{tried}\n"
        f"To get it: git clone {source.repository} (revision {source.revision}) and either set "
        f"{source.env_var}=<clone>{subfolder}, pass -T data_dir=<clone>{subfolder}, or copy "
        f"<clone>{subfolder} to {cache_root() / source.name}."
    )
