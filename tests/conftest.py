"""Suite-wide policy for tests that need a dataset which cannot be had.

Before the tests, each pinned dataset (Who&When, BLAME) is resolved once, downloading it into the
user cache if nothing else holds it (``blame.paths``). If one cannot be had (a fresh clone with
no ``../shared/`` and no network), ``BLAME_BENCH_OFFLINE=1`` is set for the session, so later
tests and their subprocesses fail at once instead of each trying the download again, and:

- outside CI, a test that then fails on a missing dataset (``DatasetNotFoundError`` in the test,
  its fixtures, or the output of a subprocess it ran) is reported as skipped, with the reason;
- under ``CI=true`` it fails as it is: CI always has ``../shared/``, so a broken resolver cannot
  turn green by skipping.

Tests that change the environment (``tests/blame/test_fetch.py``) set these variables themselves.
"""

from __future__ import annotations

import os

import pytest

from blame.errors import DatasetNotFoundError
from blame.paths import SOURCES, resolve_dataset

pytest_plugins = ["pytester"]  # tests/test_dataset_policy.py runs this policy on small suites

UNAVAILABLE: dict[str, str] = {}
MISSING_DATASET_SIGNS = ("DatasetNotFoundError", "DatasetVerificationError", "dataset was not found")


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def pytest_sessionstart(session: pytest.Session) -> None:
    for name, source in SOURCES.items():
        if not source.github:
            continue  # AFTraj has no pinned copy: its tests make their own files
        try:
            resolve_dataset(source)
        except DatasetNotFoundError as error:
            UNAVAILABLE[name] = str(error).splitlines()[0]
    if UNAVAILABLE:
        os.environ["BLAME_BENCH_OFFLINE"] = "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    if not report.failed or not UNAVAILABLE or under_ci() or call.excinfo is None:
        return
    text = f"{call.excinfo.typename}: {call.excinfo.value}" + report.longreprtext[-20000:]
    if any(sign in text for sign in MISSING_DATASET_SIGNS):
        report.outcome = "skipped"
        reason = f"needs a dataset unavailable here ({', '.join(UNAVAILABLE)}; why: end of the run)"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if UNAVAILABLE:
        state = "failing (CI=true)" if under_ci() else "skipped"
        terminalreporter.write_line(
            f"datasets unavailable, tests that need them {state}: "
            + "; ".join(f"{name}: {why}" for name, why in UNAVAILABLE.items())
        )
