"""Bench 2's headline failure mode, counted: the share of a responder's judged reports
in which a rubric judge found a fabricated finding.

Input: one row per judged report with ``responder`` and a boolean
``fabrication`` (missing values, e.g. judgements made before the judges were
asked, are left out of both counts). Output, per responder in first-seen order:
``n_judged``, ``n_fabricated`` and ``fabrication_rate`` (NaN with nothing judged).
"""

from __future__ import annotations

import pandas as pd

FABRICATION_COLUMNS = ("responder", "n_judged", "n_fabricated", "fabrication_rate")


def fabrication_rates(
    frame: pd.DataFrame, flag_column: str = "fabrication", responder_column: str = "responder"
) -> pd.DataFrame:
    rows = []
    for responder, group in frame.groupby(responder_column, sort=False):
        flags = [bool(v) for v in group[flag_column] if v is not None and not pd.isna(v)]
        n, k = len(flags), sum(flags)
        rows.append(
            {
                "responder": responder,
                "n_judged": n,
                "n_fabricated": k,
                "fabrication_rate": k / n if n else float("nan"),
            }
        )
    return pd.DataFrame.from_records(rows, columns=list(FABRICATION_COLUMNS))
