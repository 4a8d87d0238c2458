"""The online auditor on long logs: ``stride=auto`` bounds the number of prompts (so memory stays
linear in the log), the stride used is recorded, and every prefix prompt keeps the render budget
with what was left out recorded in the Attribution."""

from __future__ import annotations

import importlib
import re

import pytest

from blame.arguments import ArgumentError
from tests.solvers.test_online_auditor import STORE_KEY, Script, run, traj

auditor = importlib.import_module("solvers.online_auditor")  # the package exports the solver under this name


def test_auto_stride_is_one_up_to_the_limit_then_grows():
    assert [auditor.auto_stride(n) for n in (0, 1, 200, 201, 400, 401, 10_000)] == [1, 1, 1, 2, 2, 3, 50]
    for n in (1, 199, 200, 201, 999, 10_000, 123_457):
        assert len(auditor.prefix_schedule(n, auditor.auto_stride(n))) <= auditor.AUTO_PREFIXES


@pytest.mark.parametrize("bad", [0, -3, 1.5, "every", "", True])
def test_stride_argument_names_its_valid_values(bad):
    with pytest.raises(ArgumentError, match=r"stride.*auto or an integer >= 1"):
        auditor.online_auditor(stride=bad)


def test_default_stride_is_auto_and_recorded(tmp_path, monkeypatch):
    """With AUTO_PREFIXES = 4, a 10-step log is audited at stride 3 (prefixes 2, 5, 8, 9), a 4-step
    log at stride 1; the stride used is in the Attribution and the store; stride=2 stays 2."""
    monkeypatch.setattr(auditor, "AUTO_PREFIXES", 4)
    log, got = run([traj("long", n=10), traj("short", n=4)], Script({}), tmp_path / "auto", strategy="parallel")
    assert (got["long"].stride, [v.prefix_end for v in got["long"].verdicts]) == (3, [2, 5, 8, 9])
    assert (got["short"].stride, [v.prefix_end for v in got["short"].verdicts]) == (1, [0, 1, 2, 3])
    assert {s.id: s.store[STORE_KEY]["stride"] for s in log.samples} == {"long": 3, "short": 1}
    _, fixed = run([traj("long", n=10)], Script({}), tmp_path / "fixed", strategy="parallel", stride=2)
    assert fixed["long"].stride == 2 and len(fixed["long"].verdicts) == 5


def test_every_prefix_prompt_keeps_the_budget_and_records_omissions(tmp_path):
    """A 3,000-step log over a 3,000-character budget: each audited prompt's log is at most
    max_log_chars, shows step 0 and the prefix's last step with one omission line between, and the
    Attribution is over budget with every step some prompt left out listed."""
    t = traj("long", n=3_000)
    script = Script({})
    _, got = run([t], script, tmp_path, strategy="parallel", stride=1_000, max_log_chars=3_000)
    attribution = got["long"]
    assert attribution.stride == 1_000 and attribution.valid
    assert attribution.over_budget and attribution.omitted_steps
    for prompt in script.prompts["long"]:
        k = int(re.search(r"This is the log up to step (\d+)\.", prompt)[1])
        log = prompt.split("Session log so far:\n", 1)[1].rsplit("\n\n", 1)[0]
        assert len(log) <= 3_000
        [(first, last)] = re.findall(r"^\[\.\.\. steps (\d+)-(\d+) omitted: \d+ steps not shown \.\.\.\]$", log, re.MULTILINE)
        assert log.startswith("[step 0] ") and f"\n\n[step {k}] " in log and log.endswith(f"msg {k}\n\n[end of log]")
        assert set(range(int(first), int(last) + 1)) <= set(attribution.omitted_steps)
