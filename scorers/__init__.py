"""BLAME-bench scorers, one module per label kind; each module's docstring states its formulas.

- ``scorers.attribution``: step-labelled data (agent, step, joint, tolerant step, Who&When's
  original substring rule).
- ``scorers.vector``: vector-labelled data (exact match, Hamming, per-dimension P/R/F1).

Import from the modules (``from scorers.vector import vector``): the scorer functions share
their modules' names, so re-exporting them here would shadow the modules.
"""
