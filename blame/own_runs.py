"""Users' own runs by import format: the one dispatch that ``blame data import`` and the
trajectories task (``-T format=``) share (``docs/own_runs.md``).

``whowhen`` reads Who&When-style histories (:mod:`blame.history_json`), ``inspect`` Inspect
eval logs (:mod:`blame.inspect_log`), ``otlp`` OTLP JSON Lines traces (:mod:`blame.otlp`); each
from a file or a folder of files. Problems are the importers' one-line errors naming file and
field (``DataFormatError``, ``DatasetNotFoundError``; an impossible option is a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from blame.history_json import load_history_folder
from blame.inspect_log import DEFAULT_FAILURES, load_inspect_logs
from blame.otlp import load_otlp
from blame.schema import Trajectory

FORMATS = ("whowhen", "inspect", "otlp")
"""The import formats, by the name the command line and ``-T format`` take."""

SUFFIXES = {"whowhen": (".json",), "inspect": (".eval", ".json"), "otlp": (".jsonl", ".json")}
"""The files of each format that a folder is searched for."""


def load_runs(fmt: str, path: str | Path, scorer: str | None = None, failures: Sequence[str] = DEFAULT_FAILURES,
              keep_all: bool = False, outcome: str = "unknown") -> list[Trajectory]:
    """The runs at ``path`` (a file or a folder) in format ``fmt``. ``scorer``, ``failures`` and
    ``keep_all`` say which Inspect samples failed (:func:`blame.inspect_log.load_inspect_logs`);
    ``outcome`` is the outcome of a trace without an ERROR status (:func:`blame.otlp.load_otlp`)."""
    if fmt == "whowhen":
        return load_history_folder(path)
    if fmt == "otlp":
        return load_otlp(path, outcome=outcome)
    if fmt == "inspect":
        return load_inspect_logs(path, scorer=scorer, failures=failures, keep_all=keep_all)
    raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")


def source_files(fmt: str, path: str | Path) -> list[Path]:
    """The file ``path``, or the files of format ``fmt`` below the folder ``path``, sorted."""
    root = Path(path)
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES[fmt])
