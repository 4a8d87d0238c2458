"""Inspect entry point: importing this registers the suite's tasks, solvers and model provider."""

from providers.offline_model import OfflineModel  # noqa: F401  (registers the `offline/...` provider)
from solvers import SOLVERS  # noqa: F401
from tasks.agentrx import agentrx  # noqa: F401
from tasks.blame_cortex import blame_cortex  # noqa: F401
from tasks.blame_trading import blame_trading  # noqa: F401
from tasks.trajectories import trajectories  # noqa: F401
from tasks.who_and_when import who_and_when  # noqa: F401
