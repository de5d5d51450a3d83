"""RadLE 2.0 long-master CSV -> the tidy frame (DESIGN.md section 4).

Mapping, one source row per (candidate, case):
- ``domain == human``: a human reader; ``candidate`` is the reader and
  ``rater_seniority`` the group. Any other domain is a model run, with
  ``candidate`` as the responder and ``provider`` as the group.
- ``access == excluded`` rows are dropped unless ``include_excluded``.
- ``Master_Case_ID`` is the case; ``final_score_authoritative`` (1/0) the verdict.
- status: ``technical_failure`` or diagnosis PARSE_FAILED -> failure; an
  "I don't know" spelling (incl. ``Idon't know``) or ``abstained`` -> idk;
  ``response_valid == False`` -> invalid; else derived from diagnosis + Likert.

- ``cohort`` (model rows): ``access/domain`` as the file gives them
  (``closed/general``, ``open/general``, ``open/medical``), RadLE's cohorts.

RadLE's own ``weighted_score`` column uses the weight L (4 for a correct L4);
it is not read: points come from the scoring parameter ``weight``, whose
default is SCORING.md's L + 1 and whose ``L`` reproduces the column.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from scoring.frame import TIDY_COLUMNS, FrameError
from scoring.io.loaders import Source, read_responses_csv
from scoring.status import is_idk_text, is_parse_failed, map_unique, parse_flag

RADLE_REQUIRED: Final = (
    "Master_Case_ID",
    "candidate",
    "domain",
    "access",
    "diagnosis",
    "likert",
    "final_score_authoritative",
)


def radle_cohort(access: str, domain: str) -> str | None:
    """A model row's cohort: ``access/domain`` (either part may be blank), None if both are."""
    parts = [" ".join(str(p).split()) for p in (access, domain)]
    return None if not any(parts) else "/".join(parts)


def _flag(
    raw: pd.DataFrame, column: str, default: bool
) -> np.ndarray[tuple[int], np.dtype[np.bool_]]:
    """A True/False column as bools; blank cells and absent columns take ``default``."""
    if column not in raw.columns:
        return np.full(len(raw), default)
    try:
        values = map_unique(raw[column], parse_flag)
    except ValueError as exc:
        raise FrameError(f"RadLE column {column}: {exc}") from exc
    return np.array([default if v is None else bool(v) for v in values], dtype=bool)


def radle_to_tidy(raw: pd.DataFrame, *, include_excluded: bool = False) -> pd.DataFrame:
    """Convert a RadLE long-master table (all cells as read) to tidy rows."""
    absent = [c for c in RADLE_REQUIRED if c not in raw.columns]
    if absent:
        raise FrameError(f"not a RadLE long-master CSV: missing column(s) {', '.join(absent)}")
    text = raw.fillna("").astype(str).apply(lambda col: col.str.strip())
    if not include_excluded:
        text = text[text["access"].str.lower() != "excluded"]
        raw = raw.loc[text.index]
    human = text["domain"].str.lower().to_numpy() == "human"
    seniority = text.get("rater_seniority", pd.Series("", index=text.index))
    provider = text.get("provider", pd.Series("", index=text.index))
    group = np.where(human, seniority.to_numpy(), provider.to_numpy())

    diagnosis = text["diagnosis"]
    failed = _flag(raw, "technical_failure", False) | map_unique(diagnosis, is_parse_failed).astype(
        bool
    )
    idk = map_unique(diagnosis, is_idk_text).astype(bool) | _flag(raw, "abstained", False)
    invalid = ~_flag(raw, "response_valid", True)
    status = np.select([failed, idk, invalid], ["failure", "idk", "invalid"], default="")

    cohort = [
        None if is_human else radle_cohort(a, d)
        for is_human, a, d in zip(human, text["access"], text["domain"], strict=True)
    ]
    tidy = pd.DataFrame(
        {
            "responder": text["candidate"].to_numpy(),
            "kind": np.where(human, "human", "model"),
            "group": [g if g not in ("", "nan") else None for g in group],
            "case_id": text["Master_Case_ID"].to_numpy(),
            "status": status,  # blank: validate_frame derives answered / invalid
            "diagnosis": diagnosis.to_numpy(),
            "likert": text["likert"].to_numpy(),
            "correct": text["final_score_authoritative"].to_numpy(),
            "cohort": cohort,
        },
        columns=[*TIDY_COLUMNS, "cohort"],
    )
    return tidy.reset_index(drop=True)


def read_radle_csv(source: Source, *, include_excluded: bool = False) -> pd.DataFrame:
    """Read a RadLE long-master CSV into tidy rows (validate with validate_frame)."""
    return radle_to_tidy(read_responses_csv(source), include_excluded=include_excluded)
