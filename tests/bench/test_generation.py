"""bench/generation.py at a tiny size: one template measurement, its table row and figure, and the
model-mode counts of one session per system on the offline model (small and fast)."""

from __future__ import annotations

from bench.generation import (
    SYSTEMS,
    measure_memory,
    measure_model,
    measure_template,
    memory_table,
    model_table,
    template_figure,
    template_table,
)


def test_one_template_measurement_times_both_systems_and_writes_its_row_and_figure(tmp_path) -> None:
    row = measure_template(4)
    assert set(row["systems"]) == set(SYSTEMS)
    assert all(s["kept"] == 4 and s["wall_s"] > 0 for s in row["systems"].values())
    assert row["total_s"] == sum(s["wall_s"] for s in row["systems"].values()) and row["peak_mb"] > 0
    assert template_table([row])[2].startswith("| 4 | ")
    template_figure([row, {**row, "sessions": 8}], tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 0


def test_model_mode_counts_attempts_calls_and_tokens_from_the_logs() -> None:
    rows = measure_model(1)
    assert [r["system"] for r in rows] == list(SYSTEMS)
    for r in rows:
        assert 1 <= r["attempts"] <= 2 and r["calls"] > 0 and r["input_tokens"] > 0 and r["output_tokens"] > 0
    assert model_table(rows)[2].startswith("| cortex | offline/random | 1 | ")


def test_one_memory_measurement_gives_its_row() -> None:
    row = measure_memory("trading", 3)
    assert row["sessions"] == 3 and row["peak_mb"] >= row["warm_mb"] > 0
    assert memory_table([row])[2].startswith("| trading | 3 | ")
