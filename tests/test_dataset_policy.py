"""The suite's policy for unavailable datasets (tests/conftest.py), run on a three-test suite.

With the sibling folder hidden, an empty cache and an unreachable mirror: outside CI the two tests
that need a dataset (one in process, one through a subprocess) are skipped with the reason and
an unrelated failure still fails; under CI=true all three fail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = '''
import subprocess, sys
from blame.blame_cases import load_blame

def test_in_process():
    load_blame(None, "cortex")

def test_in_a_subprocess():
    code = "from blame.blame_cases import load_blame; load_blame(None, 'cortex')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

def test_unrelated_failure():
    assert 1 + 1 == 3
'''


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.Pytester:
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_suite=SUITE)
    for variable in ("CI", "BLAME_BENCH_OFFLINE", "BLAME_DIR", "WHO_AND_WHEN_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("BLAME_BENCH_NO_SIBLING", "1")
    monkeypatch.setenv("BLAME_BENCH_CACHE", str(tmp_path / "empty_cache"))
    monkeypatch.setenv("BLAME_BENCH_MIRROR", "http://127.0.0.1:9")
    return pytester


def test_outside_ci_a_missing_dataset_skips_with_the_reason(suite: pytest.Pytester):
    result = suite.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2, failed=1)
    result.stdout.fnmatch_lines(["datasets unavailable, tests that need them skipped: who_and_when: Downloading the*",
                                 "*needs a dataset unavailable here (who_and_when, blame, agentrx; why: end of the run)"])


def test_under_ci_a_missing_dataset_fails(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*datasets unavailable, tests that need them failing (CI=true)*"])


def test_the_real_suite_collects_without_any_dataset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """No test looks a dataset up at import or collection time: with no sibling folder, an empty
    cache and an unreachable mirror, collecting the whole suite gives no error (the tests that need
    data are then skipped or failed one by one, as above, when they run)."""
    for variable in ("CI", "BLAME_BENCH_OFFLINE", "BLAME_DIR", "WHO_AND_WHEN_DIR", "AFTRAJ_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("BLAME_BENCH_NO_SIBLING", "1")
    monkeypatch.setenv("BLAME_BENCH_CACHE", str(tmp_path / "empty_cache"))
    monkeypatch.setenv("BLAME_BENCH_MIRROR", "http://127.0.0.1:9")
    tests = Path(__file__).parent
    result = subprocess.run([sys.executable, "-m", "pytest", str(tests), "--collect-only", "-q", "-p", "no:cacheprovider"],
                            cwd=tests.parent, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "error" not in result.stdout.splitlines()[-1], result.stdout[-3000:]
    assert "datasets unavailable" in result.stdout
