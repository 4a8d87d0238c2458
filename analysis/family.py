"""The confirmatory family: the p-values Holm's adjustment runs over (``blame report --treatment``).

Fixed before the data are seen, by the options: for every named treatment method (``--treatment``,
repeatable; default every method in the logs but the baseline) that is label-free, and every
benchmark,

1. Table 1's overall comparison with the baseline (per configuration and protocol), and
2. M1's ``protocol x quartile`` interaction of that method's protocols in the benchmark's own fit
   (per sample setting; not the pooled fit).

Holm's step-down adjustment (``analysis.regressions.holm``) runs over these together; the rows
get ``family = "confirmatory"`` and ``p_holm``. Every other p-value of the report (Table 1's k=1
and k>1 groups, M1's other terms, M2, M3, the pooled fits, label-informed protocols) is
``exploratory``: printed unadjusted and marked so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis._format import config_label
from analysis.regressions import holm
from analysis.settings import setting_lookup

__all__ = ["confirmatory_family"]


def _interaction_protocol(term: str) -> str | None:
    """``protocol[X] x quartile`` -> X."""
    if term.startswith("protocol[") and term.endswith("] x quartile"):
        return term[len("protocol["):-len("] x quartile")]
    return None


def confirmatory_family(table1: pd.DataFrame, regressions: pd.DataFrame, samples: pd.DataFrame,
                        treatments: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Mark the family (module docstring) in both tables, add Holm's p, and list its members."""
    t1, reg = table1.copy(), regressions.copy()
    protocols = samples.drop_duplicates("protocol").set_index("protocol")
    informed = samples.groupby("protocol")["label_informed"].any() if "label_informed" in samples else None
    wanted = set(treatments)

    def confirmatory_protocol(protocol: str | None) -> bool:
        if protocol is None or protocol not in protocols.index:
            return False
        return protocols.loc[protocol, "method"] in wanted and not (informed is not None and bool(informed[protocol]))

    in_t1 = (t1["group"] == "overall") & ~t1["label_informed"].astype(bool) & t1["p_value"].notna() \
        & t1["treatment"].map(lambda p: p in protocols.index and protocols.loc[p, "method"] in wanted).astype(bool)
    terms = reg["term"].astype(str)
    in_reg = reg["spec"].astype(str).str.startswith("M1") & (reg["scope"] != "pooled") & reg["p_value"].notna() \
        & terms.map(lambda t: confirmatory_protocol(_interaction_protocol(t))).astype(bool)
    pvalues = pd.concat([t1.loc[in_t1, "p_value"], reg.loc[in_reg, "p_value"]], ignore_index=True)
    adjusted = holm(pvalues).to_numpy() if len(pvalues) else np.array([])
    for frame, members, values in ((t1, in_t1, adjusted[:int(in_t1.sum())]), (reg, in_reg, adjusted[int(in_t1.sum()):])):
        frame["family"] = np.where(members, "confirmatory", "exploratory")
        frame["p_holm"] = np.nan
        frame.loc[members, "p_holm"] = values
    words = setting_lookup(samples)
    listed = [f"Table 1, {r['benchmark']}, {config_label(r['model'], r['config'], words.get((r['benchmark'], r['config']), ''))}: "
              f"{r['treatment']} vs {r['baseline']} (overall)" for r in t1[in_t1].to_dict("records")]
    listed += [f"M1, {r['scope']}: {r['term']}" for r in reg[in_reg].to_dict("records")]
    return t1, reg, listed
