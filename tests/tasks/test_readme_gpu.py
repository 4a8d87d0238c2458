"""README's *On a GPU machine*: every bash block that needs no GPU is run literally.

The blocks that install vLLM or name a ``vllm/`` model cannot run here (no GPU); the others
(``blame data fetch``, ``blame report``) run as written, in a scratch folder where ``.venv/bin``
is this environment's (``doc_commands``, shared with ``tests/test_docs.py``), the datasets come
from the loopback archive server (empty cache, sibling folder hidden) and ``logs/gpu-sweep/``
holds offline-model logs of the sweep's two solvers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from archive_server import ArchiveServer, needs_shared
from doc_commands import REPO, bash_blocks, run_command, scratch_repo
from inspect_ai import eval as inspect_eval

from tasks.blame_cortex import blame_cortex


def gpu_section_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## On a GPU machine", 1)[1].split("\n## ", 1)[0]
    return bash_blocks(section)


def needs_gpu(block: str) -> bool:
    return "vllm/" in block or "pip install" in block


def test_gpu_section_shape():
    """The section installs the extra, runs the canonical command with the -M arguments that
    matter, sweeps with inspect eval-set and ends with blame report."""
    blocks = gpu_section_blocks()
    gpu = [b for b in blocks if needs_gpu(b)]
    assert any('pip install -e ".[vllm]"' in b for b in gpu)
    assert any("inspect eval tasks/blame_cortex.py --model vllm/openai/gpt-oss-120b" in b for b in gpu)
    for argument in ("tensor_parallel_size=", "enable_prefix_caching=true", "max_model_len="):
        assert all(argument in b for b in gpu if "inspect eval" in b), argument
    assert any("inspect eval-set" in b for b in gpu)
    assert [b.strip() for b in blocks if not needs_gpu(b)] == [
        ".venv/bin/blame data fetch", ".venv/bin/blame report logs/gpu-sweep --out results/gpu-sweep"]


@pytest.mark.e2e
def test_gpu_section_blocks_without_a_gpu_run_literally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each GPU-free block exits 0 and does its job: the data fetched and verified, the report written."""
    needs_shared()
    scratch_repo(tmp_path)
    for model_dir, solver in (("gpu-sweep/model", "poirot"), ("gpu-sweep/model-judge", "all_at_once")):
        inspect_eval(blame_cortex(solver=solver), model="offline/random", limit=2, display="none",
                     log_dir=str(tmp_path / "logs" / model_dir))
    with ArchiveServer() as server:
        env = {**os.environ, "BLAME_BENCH_CACHE": str(tmp_path / "cache"), "BLAME_BENCH_NO_SIBLING": "1",
               "BLAME_BENCH_MIRROR": server.url}
        env.pop("BLAME_BENCH_OFFLINE", None)
        for block in (b for b in gpu_section_blocks() if not needs_gpu(b)):
            result = run_command(block, tmp_path, env)
            assert result.returncode == 0, block + result.stdout[-2000:] + result.stderr[-2000:]
    assert {p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")} == {"who_and_when", "blame", "agentrx"}
    assert (tmp_path / "results" / "gpu-sweep" / "report.md").is_file()
