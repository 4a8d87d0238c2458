"""The real small model's server, one per pytest worker.

Inspect's ``vllm/`` provider keeps one server record per model name and process, and the first
URL it sees (``VLLM_BASE_URL``) stays in it: a second server for the same model name on the same
worker, at a new port, would be called at the first one's dead port. So every module here shares
one server per worker. One llama.cpp thread: the suite runs on two workers (pytest-xdist), and
llama.cpp's threads wait for each other, so two of them beside a busy worker run many times
slower than one.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from providers.local_model import LocalModelServer


@pytest.fixture(scope="session")
def server() -> Iterator[LocalModelServer]:
    with LocalModelServer(threads=1) as running:
        yield running
