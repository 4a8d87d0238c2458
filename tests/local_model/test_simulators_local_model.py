"""Model-mode generation meets a real model: SmolLM2-135M-Instruct on loopback (llama.cpp,
``providers.local_model``) through Inspect's ``vllm/`` provider. One clean and one injected
session per system, at most two attempts each, as one ``inspect_ai.eval``: every attempt ends
kept or with its reason (a failed manifestation or an unusable reply is reported, never kept),
and the export reports what was not kept. Budgets are small (40 answer tokens, greedy) so that
the run stays near a minute on two cores; a 135M model rarely writes a usable turn, so most
attempts end at their first reply."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from providers.local_model import SERVED_MODEL_NAME, LocalModelServer
from simulators.model_task import ATTEMPTS_KEY, KEPT_KEY, export_logs, simulate

pytestmark = pytest.mark.local_model

RUNS = {"cortex": "CR-X", "trading": "Trader-X"}
"""System -> the fault of its injected session (an agent fault, so the role's instruction reaches the model)."""
SEED = 5
"""The plan of seed 5 (safe share 0.5): session 0 clean, session 1 injected, for both systems."""


def test_one_clean_and_one_injected_session_per_system_end_to_end(server: LocalModelServer, tmp_path: Path) -> None:
    tasks = [simulate(system, sessions=2, seed=SEED, faults=fault, safe_share=0.5, max_attempts=2)
             for system, fault in RUNS.items()]
    environ = {"VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "local"}
    saved = {key: os.environ.get(key) for key in environ}
    os.environ.update(environ)
    started = time.perf_counter()
    try:
        logs = inspect_eval(tasks, model=f"vllm/{SERVED_MODEL_NAME}", max_tokens=40, temperature=0, seed=0,
                            log_dir=str(tmp_path / "logs"), display="none")
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    print(f"\nSmolLM2 model-mode generation: {2 * len(tasks)} sessions in {time.perf_counter() - started:.0f} s")
    for log, system in zip(logs, RUNS, strict=True):
        assert log.status == "success", log.error
        clean, injected = log.samples
        assert clean.metadata["faults"] == [] and injected.metadata["faults"] == [RUNS[system]]
        for sample in log.samples:
            assert sample.error is None
            attempts = sample.store[ATTEMPTS_KEY]
            assert 1 <= len(attempts) <= 2 and all(a["kept"] or a["reason"] for a in attempts)
            assert (sample.store.get(KEPT_KEY) is not None) == attempts[-1]["kept"]
            print(f"{sample.id}: " + "; ".join("kept" if a["kept"] else f"{a['reason']} ({a['calls']} calls)"
                                                for a in attempts))
        summary = export_logs([log], tmp_path / system)
        assert summary["sessions"] + summary["not_kept"] == 2 and summary["model"] == f"vllm/{SERVED_MODEL_NAME}"
