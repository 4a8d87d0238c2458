"""bench/generated_audit.py at a tiny size: two option sets of one system, generated as `blame
generate` does, audited, compared with the card, and reported with the command and each verdict."""

from __future__ import annotations

import json

from bench.generated_audit import main


def test_the_report_records_the_command_every_verdict_and_that_each_card_matches_its_recomputation(tmp_path) -> None:
    out = tmp_path / "audit.md"
    argv = ["--sessions", "16", "--options", "default,max-faults-2", "--systems", "trading", "--out", str(out)]
    assert main(argv) == 0
    text = out.read_text(encoding="utf-8")
    assert f"`.venv/bin/python bench/generated_audit.py {' '.join(argv)}`" in text
    rows = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert [(r["option_set"], r["system"], r["options"]) for r in rows] == [
        ("default", "trading", {}), ("max-faults-2", "trading", {"max_faults": 2})]
    for row in rows:
        assert row["card_matches"] is True and row["figures"]["sessions"] == 16
        assert set(row["verdicts"]) >= {"exact_vector/bag_of_words", "step_agent/novel_turn",
                                        "fault_free_prefix/beyond_position", "clean_twin",
                                        "positive_control/exact_vector"}
        assert row["figures"]["clean_twin"]["classifier"]["n"] > 0  # the twins were read back
    missed = sum(v is False for r in rows for v in r["verdicts"].values())
    assert f"Targets missed: {missed} of " in text
    assert "| default | trading | 16 | " in text and "| max-faults-2 | trading | 16 | " in text
    assert "## trading, max-faults-2 (`blame generate trading --sessions 16 --seed 0 --max-faults 2`)" in text
