"""Inspect entry point (``blame_bench``): importing this registers the suite's tasks, solvers and
model provider, and every method's Scout scanner by name (``blame_bench/<method>``: ``scanners``,
which imports the optional inspect-scout only when Scout builds a scanner, so an install without
the ``scout`` extra, and every ``inspect eval``, never imports it)."""

from providers.offline_model import OfflineModel  # noqa: F401  (registers the `offline/...` provider)
import scanners  # noqa: F401  (registers the scanners' names: blame_bench/<method>)
from solvers import SOLVERS  # noqa: F401
from tasks.agentrx import agentrx  # noqa: F401
from tasks.blame_cortex import blame_cortex  # noqa: F401
from tasks.blame_trading import blame_trading  # noqa: F401
from tasks.trajectories import trajectories  # noqa: F401
from tasks.who_and_when import who_and_when  # noqa: F401
