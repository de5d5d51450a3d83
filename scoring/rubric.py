"""The Bench 2 report rubric (SCORING.md section 6): 0..40 per case, six tiers.

Bench 2 reports its total over every case (total / 4000 over 100 CTs): a report
that is "I don't know", failed or missing can never be judged, so it counts 0
(Fail) in the total, the mean, the tiers and the ceiling (``count_unjudged``).
The figures over the judged reports alone stay beside them, labelled
``judged_*`` (a secondary figure, never the headline).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from scoring.frame import FrameError
from scoring.params import SCORING_SPEC_VERSION
from scoring.status import is_missing_value

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


# statuses of a report that will never be judged: they count 0 (Fail)
UNJUDGEABLE: Final = ("idk", "failure", "invalid")
COUNTED_AS: Final = "counted_as"  # judged | idk | failure | invalid | missing
JUDGED_COLUMNS: Final = (
    "n_judged",
    "n_counted_fail",
    "judged_total",
    "judged_ceiling",
    "judged_percent_of_ceiling",
    "judged_mean",
)


def count_unjudged(
    frame: pd.DataFrame, *, case_ids: list[str] | None = None
) -> tuple[pd.DataFrame, int]:
    """Bench 2's reading of a report frame: every responder over every report case.

    ``frame``: responder, kind, group (optional), case_id, rubric (blank when not
    judged), status (optional). A blank rubric with status idk, failure or invalid
    counts 0, and so does a case of ``case_ids`` (default: every case of the frame)
    that a responder has no row for (``missing``). A blank rubric on any other row
    (an answer still waiting for its score) is left out and counted. Returns (the
    frame with every row scored and a ``counted_as`` column, rows left out).
    """
    if len(frame) == 0:
        return frame.assign(**{COUNTED_AS: pd.Series(dtype=object)}), 0
    data = frame.copy()
    if "group" not in data.columns:
        data["group"] = None
    blank = np.array([is_missing_value(v) for v in data["rubric"].astype(object)], dtype=bool)
    status = (
        data["status"].astype(str).str.strip().str.lower()
        if "status" in data.columns
        else pd.Series("", index=data.index)
    )
    zero = blank & status.isin(UNJUDGEABLE)
    pending = blank & ~zero
    data[COUNTED_AS] = np.where(zero, status, "judged")
    data.loc[zero, "rubric"] = 0
    data = data[~pending]
    cases = [str(c) for c in (case_ids if case_ids is not None else pd.unique(frame["case_id"]))]
    who = frame.drop_duplicates("responder").set_index("responder")
    seen = set(zip(frame["responder"].astype(str), frame["case_id"].astype(str), strict=True))
    missing = [
        {
            "responder": r,
            "kind": who.at[r, "kind"],
            "group": who.at[r, "group"] if "group" in who.columns else None,
            "case_id": c,
            "rubric": 0,
            COUNTED_AS: "missing",
        }
        for r in who.index
        for c in cases
        if (str(r), c) not in seen
    ]
    columns = ["responder", "kind", "group", "case_id", "rubric", COUNTED_AS]
    out = pd.concat([data[columns], pd.DataFrame(missing, columns=columns)], ignore_index=True)
    scores = pd.to_numeric(out["rubric"], errors="coerce")
    # anything but a number is left for rubric_summary to refuse, with the rows named
    out["rubric"] = scores.astype(int) if scores.notna().all() else out["rubric"]
    return out, int(pending.sum())


def judged_figures(frame: pd.DataFrame) -> pd.DataFrame:
    """Per responder, the judged-reports-only figures (``JUDGED_COLUMNS``) of a frame
    from ``count_unjudged``; without its ``counted_as`` column every row is judged."""
    judged = (
        frame[COUNTED_AS] == "judged"
        if COUNTED_AS in frame.columns
        else pd.Series(True, index=frame.index)
    )
    scores = pd.to_numeric(frame["rubric"]).astype(float).where(judged)
    data = pd.DataFrame({"responder": frame["responder"].astype(str), "score": scores})
    grouped = data.groupby("responder", sort=True)
    out = pd.DataFrame(
        {
            "n_judged": grouped["score"].count(),
            "n_counted_fail": grouped.size() - grouped["score"].count(),
            "judged_total": grouped["score"].sum(min_count=0),
            "judged_mean": grouped["score"].mean(),
        }
    )
    out["judged_ceiling"] = RUBRIC_MAX * out["n_judged"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["judged_percent_of_ceiling"] = np.where(
            out["n_judged"] > 0, 100.0 * out["judged_total"] / out["judged_ceiling"], np.nan
        )
    return out.reset_index()[["responder", *JUDGED_COLUMNS]]


def rubric_summary(
    frame: pd.DataFrame, score_column: str = "rubric", responder_column: str = "responder"
) -> pd.DataFrame:
    """Per responder: n_cases, total, ceiling (40 N), percent of ceiling, mean,
    sample SD (NaN for one case), median, min, max and the count per tier.

    Every row must hold an integer 0..40; anything else raises FrameError. With
    ``count_unjudged``'s ``counted_as`` column, the ``judged_*`` figures follow.
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
    if COUNTED_AS in frame.columns:
        result = result.merge(judged_figures(frame), on="responder", how="left")
    result.attrs["scoring_spec_version"] = SCORING_SPEC_VERSION
    return result
