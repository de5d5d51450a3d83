"""RadLE 2.0 long-master CSV -> the tidy frame (DESIGN.md section 4).

RadLE's file, read as RadLE's own scripts read it:
- ``domain == human``: a human reader. ``provider`` names the reader (their
  code); ``candidate`` is their role (``Radiologist``, ``Trainee``), shared by
  several readers, kept as ``role``. ``rater_seniority`` is kept raw as
  ``seniority`` and mapped to RadLE's two comparison groups, the ``group``:
  ``trainees`` for PGY2 and PGY3, ``board-certified`` for any other value
  (blank stays blank). Any other domain is a model run, ``candidate`` the
  responder and ``provider`` its group.
- ``access == excluded`` rows are dropped unless ``include_excluded``; the
  roster (``exclude``: model names taken off the board, as RadLE's roster
  file did for replaced models) drops those models' rows whatever their access.
- ``Master_Case_ID`` is the case; ``final_score_authoritative`` (1/0) the verdict.
- status, RadLE's ``score_row`` rules: ``technical_failure``, or
  ``PARSE_FAILED`` as the diagnosis or the Likert -> failure; an
  "I don't know" spelling (incl. ``Idon't know``) -> idk; a valid Likert 0..4
  -> answered, scored by its verdict even when the diagnosis is empty;
  otherwise invalid (a diagnosis without a valid Likert, or an empty row).
  ``abstained`` and ``response_valid`` are not read.

- ``cohort`` (model rows): ``access/domain`` as the file gives them
  (``closed/general``, ``open/general``, ``open/medical``), RadLE's cohorts.

RadLE's own ``weighted_score`` column uses the weight L (4 for a correct L4);
it is not read: points come from the scoring parameter ``weight``, whose
default is SCORING.md's L + 1 and whose ``L`` reproduces the column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import numpy as np
import pandas as pd

from scoring.frame import TIDY_COLUMNS, FrameError
from scoring.io.loaders import Source, read_responses_csv
from scoring.status import (
    is_idk_text,
    is_parse_failed,
    likert_is_valid,
    map_unique,
    parse_flag,
    parse_likert,
)

RADLE_REQUIRED: Final = (
    "Master_Case_ID",
    "candidate",
    "domain",
    "access",
    "diagnosis",
    "likert",
    "final_score_authoritative",
)

# the extra columns of radle_to_tidy, beside the tidy ones
RADLE_EXTRA: Final = ("cohort", "role", "seniority", "source_row")
# RadLE's trainees: PGY2 and PGY3; every other seniority is board-certified
_TRAINEE: Final = re.compile(r"pgy[\s_-]*[23]", re.IGNORECASE)


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


def radle_group(seniority: str) -> str | None:
    """RadLE's comparison group of a reader's raw ``rater_seniority``: ``trainees`` for
    PGY2 and PGY3 (any case, spacing or hyphen), ``board-certified`` for any other
    value, None when blank."""
    text = " ".join(str(seniority).split())
    if not text or text.lower() == "nan":
        return None
    return "trainees" if _TRAINEE.fullmatch(text) else "board-certified"


def _likert_failed(text: pd.Series[str]) -> np.ndarray[tuple[int], np.dtype[np.bool_]]:
    return map_unique(text, is_parse_failed).astype(bool)


def radle_to_tidy(
    raw: pd.DataFrame,
    *,
    include_excluded: bool = False,
    exclude: Iterable[str] = (),
) -> pd.DataFrame:
    """Convert a RadLE long-master table (all cells as read) to tidy rows, with the
    extra columns ``cohort`` (models), ``role`` and ``seniority`` (humans) and
    ``source_row`` (the row of ``raw`` each came from).

    ``exclude`` names models (``candidate``) taken off the board; a name that is no
    model of the file is an error (a typo would otherwise keep the model silently).
    """
    absent = [c for c in RADLE_REQUIRED if c not in raw.columns]
    if absent:
        raise FrameError(f"not a RadLE long-master CSV: missing column(s) {', '.join(absent)}")
    text = raw.fillna("").astype(str).apply(lambda col: col.str.strip())
    human = text["domain"].str.lower() == "human"
    if human.any() and "provider" not in text.columns:
        raise FrameError("RadLE human rows need the provider column (it names the reader)")
    provider = text.get("provider", pd.Series("", index=text.index))
    roster = {" ".join(str(name).split()) for name in exclude} - {""}
    unknown = sorted(roster - set(text.loc[~human, "candidate"]))
    if unknown:
        raise FrameError(
            f"--exclude names no model of the file: {', '.join(unknown)} "
            "(models are named by the candidate column)"
        )
    keep = ~(~human & text["candidate"].isin(roster))
    if not include_excluded:
        keep &= text["access"].str.lower() != "excluded"
    text, raw, human = text[keep], raw.loc[keep], human[keep].to_numpy()
    blank_reader = human & (provider[keep] == "").to_numpy()
    if blank_reader.any():
        rows = ", ".join(str(i + 2) for i in np.flatnonzero(keep.to_numpy())[blank_reader][:20])
        raise FrameError(f"RadLE human row(s) without a provider (the reader), file lines {rows}")
    seniority = text.get("rater_seniority", pd.Series("", index=text.index)).to_numpy()
    group = [
        radle_group(sen) if is_human else (prov or None)
        for is_human, sen, prov in zip(human, seniority, provider[keep], strict=True)
    ]

    diagnosis = text["diagnosis"]
    likert = text["likert"]
    failed = (
        _flag(raw, "technical_failure", False)
        | map_unique(diagnosis, is_parse_failed).astype(bool)
        | _likert_failed(likert)
    )
    idk = map_unique(diagnosis, is_idk_text).astype(bool)
    answered = likert_is_valid(map_unique(likert, parse_likert, dtype=float))
    status = np.select([failed, idk, answered], ["failure", "idk", "answered"], default="invalid")

    cohort = [
        None if is_human else radle_cohort(a, d)
        for is_human, a, d in zip(human, text["access"], text["domain"], strict=True)
    ]
    tidy = pd.DataFrame(
        {
            "responder": np.where(human, provider[keep].to_numpy(), text["candidate"].to_numpy()),
            "kind": np.where(human, "human", "model"),
            "group": group,
            "case_id": text["Master_Case_ID"].to_numpy(),
            "status": status,
            "diagnosis": diagnosis.to_numpy(),
            "likert": likert.to_numpy(),
            "correct": text["final_score_authoritative"].to_numpy(),
            "cohort": cohort,
            "role": np.where(human, text["candidate"].to_numpy(), None),
            "seniority": [s or None if h else None for h, s in zip(human, seniority, strict=True)],
            "source_row": np.flatnonzero(keep.to_numpy()),  # 0-based row of ``raw``
        },
        columns=[*TIDY_COLUMNS, *RADLE_EXTRA],
    )
    return tidy.reset_index(drop=True)


def read_radle_csv(
    source: Source, *, include_excluded: bool = False, exclude: Iterable[str] = ()
) -> pd.DataFrame:
    """Read a RadLE long-master CSV into tidy rows (validate with validate_frame)."""
    return radle_to_tidy(
        read_responses_csv(source), include_excluded=include_excluded, exclude=exclude
    )


def read_roster(text: str) -> list[str]:
    """Model names from a roster file: one a line; blank lines and ``#`` comments skipped."""
    names = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [name for name in names if name]
