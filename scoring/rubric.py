"""The Bench 2 report rubric (SCORING.md section 6): 0..40 per case, six tiers."""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from scoring.frame import FrameError
from scoring.params import SCORING_SPEC_VERSION

RUBRIC_MAX: Final = 40
# (name, lowest score, highest score), best first.
TIERS: Final = (
    ("exceptional", 38, 40),
    ("strong", 32, 37),
    ("solid", 24, 31),
    ("mixed", 16, 23),
    ("poor", 8, 15),
    ("fail", 0, 7),
)


def rubric_tier(score: int) -> str:
    """Tier name of one case score."""
    for name, low, high in TIERS:
        if low <= score <= high:
            return name
    raise ValueError(f"rubric score must be an integer 0..{RUBRIC_MAX}, got {score!r}")


def rubric_summary(
    frame: pd.DataFrame, score_column: str = "rubric", responder_column: str = "responder"
) -> pd.DataFrame:
    """Per responder: n_cases, total, ceiling (40 N), percent of ceiling, mean,
    sample SD (NaN for one case), median, min, max and the count per tier.

    Every row must hold an integer 0..40; anything else raises FrameError.
    """
    columns = [
        "responder",
        "n_cases",
        "total",
        "ceiling",
        "percent_of_ceiling",
        "mean",
        "sd",
        "median",
        "min",
        "max",
        *(f"n_{name}" for name, _, _ in TIERS),
    ]
    if len(frame) == 0:
        return pd.DataFrame(columns=columns)
    scores = pd.to_numeric(frame[score_column], errors="coerce").to_numpy(dtype=float)
    bad = ~((scores >= 0) & (scores <= RUBRIC_MAX) & (np.floor(scores) == scores))
    if bad.any():
        raise FrameError(
            f"rubric scores must be integers 0..40; bad rows {np.flatnonzero(bad)[:20].tolist()}"
        )
    data = pd.DataFrame(
        {"responder": frame[responder_column].astype(str).to_numpy(), "score": scores}
    )
    tiers = pd.cut(
        data["score"],
        bins=[-0.5, *(high + 0.5 for _, _, high in reversed(TIERS))],
        labels=[name for name, _, _ in reversed(TIERS)],
    )
    grouped = data.groupby("responder", sort=True)["score"]
    out = grouped.agg(
        n_cases="count", total="sum", mean="mean", sd="std", median="median", min="min", max="max"
    )
    out["ceiling"] = RUBRIC_MAX * out["n_cases"]
    out["percent_of_ceiling"] = 100.0 * out["total"] / out["ceiling"]
    tier_counts = pd.crosstab(data["responder"], tiers).reindex(
        columns=[name for name, _, _ in TIERS], fill_value=0
    )
    for name, _, _ in TIERS:
        out[f"n_{name}"] = tier_counts[name].reindex(out.index, fill_value=0).astype(int)
    result = out.reset_index()[columns]
    result.attrs["scoring_spec_version"] = SCORING_SPEC_VERSION
    return result
