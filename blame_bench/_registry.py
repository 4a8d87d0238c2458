"""Inspect entry point (``blame_bench``): importing this registers the suite's tasks, solvers and
model provider, and, when the optional ``scout`` extra is installed, every method's Scout scanner
(``blame_bench/<method>``: ``scanners``). Without inspect-scout the scanners are left out and
everything else still registers."""

from providers.offline_model import OfflineModel  # noqa: F401  (registers the `offline/...` provider)
from solvers import SOLVERS  # noqa: F401
from tasks.agentrx import agentrx  # noqa: F401
from tasks.blame_cortex import blame_cortex  # noqa: F401
from tasks.blame_trading import blame_trading  # noqa: F401
from tasks.trajectories import trajectories  # noqa: F401
from tasks.who_and_when import who_and_when  # noqa: F401

try:
    import inspect_scout  # noqa: F401  (the optional `scout` extra)
except ImportError:
    pass  # an eval-only install: no scanners
else:
    import scanners  # noqa: F401  (registers the scanners blame_bench/<method>)
