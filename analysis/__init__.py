"""Eval logs -> frames -> complexity quartiles, regressions, tables, figures (``blame report``).

One module per concept:

- :mod:`analysis.frames`: logs -> the per-sample frame and the per-persona votes frame
- :mod:`analysis.configs`: configuration identity (model, roles, settings, limits, task arguments) as a hash
- :mod:`analysis.settings`: a configuration's settings in words (what sets it apart), the legend
- :mod:`analysis.outcomes`: the outcome each benchmark is compared on (``--metric``)
- :mod:`analysis.complexity`: per-case reasoning complexity and quartiles
- :mod:`analysis.significance`: case-level tests and intervals of a gain (exact sign-flip and
  case permutation, each with the interval that inverts it), the case bootstrap
- :mod:`analysis.power`: the smallest gain the case-level test detects; :mod:`analysis.m1_power`:
  the power of M1's interaction by simulation; :mod:`analysis.power_command`: ``blame power``
- :mod:`analysis.regressions`: logistic regressions with odds ratios (CR3 by case, t(G-1), Firth)
- :mod:`analysis.tables`: Table 1, accuracy by quartile, Who&When accuracy with its Random row and
  Table 3 (Markdown + CSV)
- :mod:`analysis.accuracy`: every method's accuracy per benchmark with case-level intervals
- :mod:`analysis.family`: the pre-specified confirmatory family and Holm's adjustment
- :mod:`analysis.views`: RAFFLES' and AgentForesight's views, per-dimension P/R/F1
- :mod:`analysis.paper_views`: POIROT's Fig. 4 per persona and Supplementary D per scenario,
  RAFFLES per iteration
- :mod:`analysis.pairwise`: every two methods of a configuration, Holm over the pairs
- :mod:`analysis.published_cells`: the seed papers' published cells (the data file, read strictly);
  :mod:`analysis.published`: those cells beside ours; :mod:`analysis.published_markdown`: in words,
  and the reproduction summary
- :mod:`analysis.provenance`: the reproducibility block (versions, dates, tokens, commands)
- :mod:`analysis.radial`: the radial embedding of binary attribution vectors
- :mod:`analysis.figures`: the figures (PNG + PDF)
- :mod:`analysis.report`: the whole report with a manifest

Importing this package does not import matplotlib, statsmodels or firthmodels; they load when used.
"""

from analysis.accuracy import accuracy_table
from analysis.complexity import MULTI_AGENT_METHODS, add_complexity, complexity_frame, participants
from analysis.frames import SAMPLE_COLUMNS, VOTE_COLUMNS, LogSet, read_logs, votes_frame
from analysis.family import confirmatory_family
from analysis.radial import dimension_angle, radial_position
from analysis.regressions import regressions
from analysis.report import ReportError, run_report
from analysis.significance import gain_test, mcnemar_exact, sign_flip_exact, sign_flip_interval
from analysis.tables import quartile_accuracy, quartile_gains, table1, who_and_when_table

__all__ = [
    "MULTI_AGENT_METHODS",
    "SAMPLE_COLUMNS",
    "VOTE_COLUMNS",
    "LogSet",
    "ReportError",
    "accuracy_table",
    "add_complexity",
    "complexity_frame",
    "confirmatory_family",
    "dimension_angle",
    "gain_test",
    "mcnemar_exact",
    "participants",
    "quartile_accuracy",
    "quartile_gains",
    "radial_position",
    "read_logs",
    "regressions",
    "run_report",
    "table1",
    "sign_flip_exact",
    "sign_flip_interval",
    "votes_frame",
    "who_and_when_table",
]
