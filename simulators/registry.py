"""The runnable systems by name (``simulators.systems``)."""

from __future__ import annotations

from simulators.engine import System


def systems() -> dict[str, System]:
    """The runnable systems by name (imported on first use)."""
    from simulators.cortex import SYSTEM as CORTEX
    from simulators.trading import SYSTEM as TRADING

    return {"cortex": CORTEX, "trading": TRADING}
