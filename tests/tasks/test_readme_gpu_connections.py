"""README's *On a GPU machine*: each vLLM ``inspect eval`` carries ``--max-connections N`` with N =
samples run at once x POIROT's widest wave per sample (its answers, A * min(max_questions, A - 1)),
computed here from the data and POIROT's defaults, so the numbers cannot drift."""

from __future__ import annotations

import inspect
import re

from doc_commands import REPO, bash_blocks
from inspect_ai import Task

from blame.state import trajectory_from_metadata
from solvers.poirot import poirot
from tasks.blame_cortex import blame_cortex
from tasks.blame_trading import blame_trading


def _widest_wave(task: Task) -> int:
    """The most calls one POIROT sample of ``task`` sends at once at the defaults."""
    max_questions = inspect.signature(poirot).parameters["max_questions"].default
    agents = [len(trajectory_from_metadata(s.metadata).system.agents) for s in task.dataset]
    return max(max(a, a * min(max_questions, a - 1)) for a in agents)


def _gpu_commands() -> list[str]:
    section = (REPO / "README.md").read_text(encoding="utf-8").split("## On a GPU machine", 1)[1].split("\n## ", 1)[0]
    joined = [re.sub(r"\s+", " ", b.replace("\\\n", " ")) for b in bash_blocks(section)]
    chunks = [c.strip() for block in joined for c in re.split(r"(?=\.venv/bin/inspect )", block)]
    return [c for c in chunks if c.startswith(".venv/bin/inspect ") and "tensor_parallel_size" in c]


def _connections(command: str) -> int:
    found = re.findall(r"--max-connections (\d+)", command)
    assert len(found) == 1, command
    return int(found[0])


def test_gpu_commands_size_max_connections_for_poirots_widest_wave():
    cortex, trading = blame_cortex(), blame_trading()
    assert (_widest_wave(cortex), _widest_wave(trading)) == (6, 24)
    commands = _gpu_commands()
    canonical = next(c for c in commands if c.startswith(".venv/bin/inspect eval tasks/blame_cortex.py"))
    assert _connections(canonical) == len(cortex.dataset) * _widest_wave(cortex) == 90
    sweep = [c for c in commands if c.startswith(".venv/bin/inspect eval-set")]
    assert len(sweep) == 2, commands
    poirot_run, judge_run = sorted(sweep, key=lambda c: "solver=all_at_once" in c)
    epochs = int(re.search(r"--epochs (\d+)", poirot_run).group(1))
    assert _connections(poirot_run) == len(trading.dataset) * epochs * _widest_wave(trading) == 432
    assert _connections(judge_run) >= (len(cortex.dataset) + len(trading.dataset)) * epochs == 63
