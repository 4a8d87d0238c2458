"""Reading a log in slices gives the frames reading it whole gives."""

from __future__ import annotations

import pandas as pd

import analysis.log_reading
from analysis.frames import read_logs


def test_one_sample_slices_give_the_same_frames(log_dir, logset, monkeypatch) -> None:
    monkeypatch.setattr(analysis.log_reading, "SLICE", 1)
    sliced = read_logs(log_dir, progress=None, warn=lambda message: None)
    assert len(logset.samples) > 4 and len(logset.votes) > 0
    pd.testing.assert_frame_equal(sliced.samples, logset.samples)
    pd.testing.assert_frame_equal(sliced.votes, logset.votes)
    assert [r.samples for r in sliced.logs] == [r.samples for r in logset.logs]
