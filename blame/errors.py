"""Errors raised on bad setup or bad input data (never on bad model output)."""

from __future__ import annotations

from pathlib import Path


class DatasetNotFoundError(FileNotFoundError):
    """A dataset folder could not be found in any of the places the suite looks."""


class DataFormatError(ValueError):
    """A source file is malformed: names the file and the field that is wrong."""

    def __init__(self, path: str | Path, field: str, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        super().__init__(f"{self.path}: field '{field}': {problem}")
