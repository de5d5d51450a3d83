"""Input validation: anything tidy-ish -> the tidy frame of SCORING.md section 1."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.categories import STATUSES
from scoring.status import (
    BoolArray,
    likert_is_valid,
    map_unique,
    parse_flag,
    parse_likert,
    status_codes,
    text_codes,
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

    def __reduce__(self) -> tuple[type[UngradedRowsError], tuple[list[tuple[str, str]]]]:
        # pickled by its rows, not its message: it crosses the scoring worker's pipe
        return (type(self), (self.rows,))


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
    Text columns come back as object dtype; work is done once per distinct
    value, so a million rows with a few thousand distinct texts stay cheap.
    """
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    if len(raw) == 0:
        return empty_frame()
    absent = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if absent:
        raise FrameError(f"missing required column(s): {', '.join(absent)}")
    raw = raw.reset_index(drop=True)
    n = len(raw)

    resp, responders = _required_text(raw, "responder")
    case, cases = _required_text(raw, "case_id")
    kind, kinds = text_codes(raw["kind"], lambda v: str(v).strip().lower())
    bad_kind = (kind < 0) | ~np.isin(kind, [i for i, k in enumerate(kinds) if k in KINDS])
    if bad_kind.any():
        bad = sorted({k for k in kinds if k not in KINDS} | ({""} if (kind < 0).any() else set()))
        raise FrameError(f"kind must be human or model, got {bad} in rows {_rows(bad_kind)}")
    group, groups = (
        text_codes(raw["group"], lambda v: str(v).strip())
        if "group" in raw.columns
        else (np.full(n, -1, dtype=np.int64), [])
    )
    diag, diagnoses = (
        text_codes(raw["diagnosis"], str)
        if "diagnosis" in raw.columns
        else (np.full(n, -1, dtype=np.int64), [])
    )
    likert = (
        map_unique(raw["likert"], parse_likert, dtype=float)
        if "likert" in raw.columns
        else np.full(n, np.nan)
    )
    failed = (
        _flags(raw["technical_failure"], "technical_failure")[0]
        if "technical_failure" in raw.columns
        else np.zeros(n, bool)
    )
    status = status_codes(diag, diagnoses, likert, failed)
    if "status" in raw.columns:
        status = _given_status(raw["status"], status, likert)
    _check_consistency(resp, case, kind, group, responders, cases)
    answered = status == STATUSES.index("answered")
    correct = _verdicts(raw)
    if require_verdicts:
        ungraded = np.flatnonzero(answered & np.asarray(correct.isna()))
        if len(ungraded):
            pairs = [(responders[resp[i]], cases[case[i]]) for i in ungraded]
            raise UngradedRowsError(pairs)
    return pd.DataFrame(
        {
            "responder": _texts(responders, resp),
            "kind": _texts(kinds, kind),
            "group": _texts(groups, group, blank=None),
            "case_id": _texts(cases, case),
            "status": _texts(list(STATUSES), status.astype(np.int64)),
            "diagnosis": _texts(diagnoses, diag, blank=""),
            "likert": pd.arrays.IntegerArray(
                np.where(answered, np.nan_to_num(likert), 0).astype(np.int8), mask=~answered
            ),
            "correct": correct,
        }
    )


def _required_text(raw: pd.DataFrame, col: str) -> tuple[npt.NDArray[np.int64], list[str]]:
    codes, names = text_codes(raw[col], lambda v: str(v).strip())
    if (codes < 0).any():
        raise FrameError(f"{col} is empty in row(s) {_rows(codes < 0)}")
    return codes, names


def _texts(
    names: list[str], codes: npt.NDArray[np.int64], blank: str | None = ""
) -> pd.Series[Any]:
    """Gather names by code (-1 -> ``blank``) as an object column (no str inference)."""
    table = np.array([*names, blank], dtype=object)
    return pd.Series(table[codes], dtype=object)


def _given_status(
    column: pd.Series[Any], derived: npt.NDArray[np.int8], likert: npt.NDArray[np.float64]
) -> npt.NDArray[np.int8]:
    """An explicit ``status`` wins where present; it must be a known, consistent one."""
    given, names = text_codes(column, lambda v: str(v).strip().lower())
    unknown = sorted(set(names) - set(STATUSES))
    if unknown:
        raise FrameError(f"unknown status value(s) {unknown}; expected one of {STATUSES}")
    index = np.array([*(STATUSES.index(s) for s in names), -1], dtype=np.int64)[given]
    status = np.where(index >= 0, index, derived).astype(np.int8)
    bad = (status == STATUSES.index("answered")) & ~likert_is_valid(likert)
    if bad.any():
        raise FrameError(f"status 'answered' needs a Likert 0..4, rows {_rows(bad)}")
    return status


def _rows(mask: Any) -> str:
    idx = np.flatnonzero(np.asarray(mask)) if np.asarray(mask).dtype == bool else np.asarray(mask)
    shown = ", ".join(str(i) for i in idx[:_MAX_LISTED])
    return shown + (f", ... ({len(idx)} in all)" if len(idx) > _MAX_LISTED else "")


def _flags(series: pd.Series[Any], name: str) -> tuple[BoolArray, BoolArray]:
    """(value, known) arrays for a boolean-ish column; unknown where blank/pending."""

    def code(value: object) -> int:
        flag = parse_flag(value)
        return -1 if flag is None else int(flag)

    try:
        values = map_unique(series, code, dtype=np.int8)
    except ValueError as exc:
        raise FrameError(f"column {name}: {exc}") from exc
    return values == 1, values >= 0


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


def _check_consistency(
    resp: npt.NDArray[np.int64],
    case: npt.NDArray[np.int64],
    kind: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    responders: list[str],
    cases: list[str],
) -> None:
    """One row per (responder, case); one kind and one group per responder."""
    key = resp * max(len(cases), 1) + case
    order = np.argsort(key, kind="stable")
    repeat = order[1:][key[order][1:] == key[order][:-1]]
    if len(repeat):
        pairs = [(responders[resp[i]], cases[case[i]]) for i in np.sort(repeat)]
        raise FrameError(f"duplicate (responder, case_id) rows: {_listing(pairs)}")
    span = int(group.max(initial=-1)) + 2
    profile = np.unique(resp * (2 * span) + kind * span + (group + 1))
    per_responder = np.bincount(profile // (2 * span), minlength=len(responders))
    mixed = [responders[i] for i in np.flatnonzero(per_responder > 1)]
    if mixed:
        raise FrameError(f"responder(s) with more than one kind or group: {mixed[:_MAX_LISTED]}")
