"""Input validation: anything tidy-ish -> the tidy frame of SCORING.md section 1."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from scoring.categories import STATUSES
from scoring.status import (
    BoolArray,
    derive_status,
    is_missing_value,
    likert_is_valid,
    map_unique,
    parse_flag,
    parse_likert,
)

TIDY_COLUMNS: Final = (
    "responder",
    "kind",
    "group",
    "case_id",
    "status",
    "diagnosis",
    "likert",
    "correct",
)
REQUIRED_COLUMNS: Final = ("responder", "kind", "case_id")
KINDS: Final = ("human", "model")
_MAX_LISTED = 20


class FrameError(ValueError):
    """The input cannot be scored as it stands; the message says which rows."""


class UngradedRowsError(FrameError):
    """Answered rows without a verdict. ``rows`` lists (responder, case_id)."""

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        self.rows = list(rows)
        super().__init__(
            f"{len(self.rows)} answered row(s) have no verdict (`correct` or `verdict`); "
            f"grade them first (responder/case_id): {_listing(self.rows)}"
        )


def _listing(rows: Sequence[tuple[str, str]]) -> str:
    shown = ", ".join(f"{r}/{c}" for r, c in rows[:_MAX_LISTED])
    more = len(rows) - _MAX_LISTED
    return shown + (f", ... and {more} more" if more > 0 else "")


def empty_frame() -> pd.DataFrame:
    """A tidy frame with no rows and the right columns."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in TIDY_COLUMNS}).astype(
        {"likert": "Int8", "correct": "Int8"}
    )


def validate_frame(
    data: pd.DataFrame | Iterable[Mapping[str, Any]], *, require_verdicts: bool = True
) -> pd.DataFrame:
    """Validate responses into the tidy frame, deriving ``status`` where absent.

    Accepts a DataFrame or records. ``correct`` may be 0/1/True/False or a
    ``verdict`` column with correct/incorrect/pending may stand in for it.
    An optional ``technical_failure`` column marks failures. Raises FrameError
    (UngradedRowsError for answered rows without a verdict) listing the rows.
    """
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    if len(raw) == 0:
        return empty_frame()
    absent = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if absent:
        raise FrameError(f"missing required column(s): {', '.join(absent)}")
    raw = raw.reset_index(drop=True)

    out = pd.DataFrame(index=raw.index)
    for col in ("responder", "case_id"):
        blank = map_unique(raw[col], is_missing_value).astype(bool)
        if blank.any():
            raise FrameError(f"{col} is empty in row(s) {_rows(np.flatnonzero(blank))}")
        out[col] = raw[col].astype(str).str.strip()
    out["kind"] = raw["kind"].astype(str).str.strip().str.lower()
    bad_kind = ~out["kind"].isin(KINDS)
    if bad_kind.any():
        bad = sorted(set(out.loc[bad_kind, "kind"]))
        raise FrameError(f"kind must be human or model, got {bad} in rows {_rows(bad_kind)}")
    group = raw["group"] if "group" in raw.columns else pd.Series(None, index=raw.index)
    # object dtype: pandas 3 would store None as NaN in a str column
    out["group"] = pd.Series(
        map_unique(group, lambda v: None if is_missing_value(v) else str(v).strip()),
        index=raw.index,
        dtype=object,
    )
    diagnosis = raw["diagnosis"] if "diagnosis" in raw.columns else pd.Series("", index=raw.index)
    out["diagnosis"] = map_unique(diagnosis, lambda v: "" if is_missing_value(v) else str(v))

    likert = (
        map_unique(raw["likert"], parse_likert).astype(float)
        if "likert" in raw.columns
        else np.full(len(raw), np.nan)
    )
    failed = (
        _flags(raw["technical_failure"], "technical_failure")[0]
        if "technical_failure" in raw.columns
        else np.zeros(len(raw), bool)
    )
    status = derive_status(out["diagnosis"], likert, failed).astype(object)
    if "status" in raw.columns:
        given = map_unique(
            raw["status"], lambda v: None if is_missing_value(v) else str(v).strip().lower()
        )
        unknown = sorted({s for s in given if s is not None and s not in STATUSES})
        if unknown:
            raise FrameError(f"unknown status value(s) {unknown}; expected one of {STATUSES}")
        status = np.where(pd.isna(given), status, given)
        bad = (status == "answered") & ~likert_is_valid(likert)
        if bad.any():
            raise FrameError(f"status 'answered' needs a Likert 0..4, rows {_rows(bad)}")
    out["status"] = status
    out["likert"] = pd.array(
        np.where(status == "answered", likert, np.nan), dtype="Float64"
    ).astype("Int8")
    out["correct"] = pd.Series(_verdicts(raw), index=raw.index)
    _check_consistency(out)
    if require_verdicts:
        ungraded = (out["status"] == "answered") & out["correct"].isna()
        if ungraded.any():
            sel = out.loc[ungraded, ["responder", "case_id"]]
            raise UngradedRowsError(list(zip(sel["responder"], sel["case_id"], strict=True)))
    return out[list(TIDY_COLUMNS)]


def _rows(mask: Any) -> str:
    idx = np.flatnonzero(np.asarray(mask)) if np.asarray(mask).dtype == bool else np.asarray(mask)
    shown = ", ".join(str(i) for i in idx[:_MAX_LISTED])
    return shown + (f", ... ({len(idx)} in all)" if len(idx) > _MAX_LISTED else "")


def _flags(series: pd.Series[Any], name: str) -> tuple[BoolArray, BoolArray]:
    """(value, known) arrays for a boolean-ish column; unknown where blank/pending."""
    try:
        values = map_unique(series, parse_flag)
    except ValueError as exc:
        raise FrameError(f"column {name}: {exc}") from exc
    known = np.asarray(pd.notna(values), dtype=bool)
    return values.astype(bool) & known, known


def _verdicts(raw: pd.DataFrame) -> pd.arrays.IntegerArray:
    """``correct`` as nullable 0/1, filled from ``verdict`` where ``correct`` is blank."""
    value = np.zeros(len(raw), bool)
    known = np.zeros(len(raw), bool)
    for col in ("verdict", "correct"):  # later columns win where they are known
        if col in raw.columns:
            v, k = _flags(raw[col], col)
            value = np.where(k, v, value)
            known |= k
    return pd.arrays.IntegerArray(value.astype(np.int8), mask=~known)


def _check_consistency(out: pd.DataFrame) -> None:
    dup = out.duplicated(["responder", "case_id"], keep="first")
    if dup.any():
        pairs = out.loc[dup, ["responder", "case_id"]]
        listed = _listing(list(zip(pairs["responder"], pairs["case_id"], strict=True)))
        raise FrameError(f"duplicate (responder, case_id) rows: {listed}")
    per = out.groupby("responder", sort=True)[["kind", "group"]].nunique(dropna=False)
    mixed = per.index[(per["kind"] > 1) | (per["group"] > 1)].tolist()
    if mixed:
        raise FrameError(f"responder(s) with more than one kind or group: {mixed[:_MAX_LISTED]}")
