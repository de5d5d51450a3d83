"""Per-case points (SCORING.md section 2) and the responders x cases matrix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.categories import (
    CORRECT_0,
    FAILURE,
    IDK,
    INVALID,
    MISSING,
    N_CATEGORIES,
    STATUSES,
    WRONG_0,
    FloatArray,
    category_points,
)
from scoring.frame import FrameError

IntArray = npt.NDArray[np.int8]


def row_categories(frame: pd.DataFrame) -> IntArray:
    """Category code (scoring.categories) of each row of a validated tidy frame."""
    status = pd.Index(STATUSES).get_indexer(pd.Index(frame["status"]))
    likert = frame["likert"].fillna(0).to_numpy(dtype=np.int8)
    correct = frame["correct"].fillna(0).to_numpy(dtype=np.int8)
    answered = np.where(correct == 1, CORRECT_0 + likert, WRONG_0 + likert)
    codes = np.select(
        [status == STATUSES.index(s) for s in ("answered", "idk", "invalid", "failure")],
        [answered, IDK, INVALID, FAILURE],
        default=MISSING,
    )
    return codes.astype(np.int8)


def row_points(frame: pd.DataFrame, idk_score: float = 0.0, weight: str = "L+1") -> FloatArray:
    """Points s of each row: +(L+1) correct, -(L+1) wrong, idk_score, else 0
    (with ``weight`` ``L``: +L and -L, RadLE's ``weighted_score``)."""
    out: FloatArray = category_points(idk_score, weight)[row_categories(frame)]
    return out


@dataclass(frozen=True)
class ResponseMatrix:
    """Every responder x every scored case, as category codes (MISSING = no row)."""

    responders: tuple[str, ...]
    kinds: tuple[str, ...]
    groups: tuple[str | None, ...]
    case_ids: tuple[str, ...]
    categories: IntArray  # shape (responders, cases)

    @property
    def n_cases(self) -> int:
        return len(self.case_ids)

    def counts(self) -> FloatArray:
        """Count vector of each responder, shape (responders, 14)."""
        return count_vectors(self.categories)

    def points(self, idk_score: float = 0.0, weight: str = "L+1") -> FloatArray:
        """Points of each responder on each case, shape (responders, cases)."""
        out: FloatArray = category_points(idk_score, weight)[self.categories]
        return out

    def completion(self) -> FloatArray:
        """Share of scored cases with a row, per responder (NaN with no cases)."""
        if self.n_cases == 0:
            return np.full(len(self.responders), np.nan)
        out: FloatArray = (self.categories != MISSING).mean(axis=1)
        return out


def count_vectors(categories: IntArray) -> FloatArray:
    """Count of each category along the last axis: (..., cases) -> (..., 14)."""
    lead = categories.shape[:-1]
    rows = int(np.prod(lead))
    offsets = np.arange(rows, dtype=np.int64)[:, None] * N_CATEGORIES
    flat = (offsets + categories.reshape(rows, categories.shape[-1])).ravel()
    counts = np.bincount(flat, minlength=rows * N_CATEGORIES)
    return counts.reshape(*lead, N_CATEGORIES).astype(np.float64)


def build_matrix(frame: pd.DataFrame, case_ids: Sequence[str] | None = None) -> ResponseMatrix:
    """Arrange a validated tidy frame as a ResponseMatrix.

    The scored case set is the union of the frame's case ids (sorted, so the
    result does not depend on row order) or, when given, ``case_ids`` in that
    order; rows on other cases are left out. Responders are sorted by name.
    """
    resp_codes, responders = pd.factorize(frame["responder"], sort=True)
    if case_ids is None:
        case_codes, cases = pd.factorize(frame["case_id"], sort=True)
        case_list = [str(c) for c in cases]
    else:
        case_list = [str(c) for c in case_ids]
        if len(set(case_list)) != len(case_list):
            raise FrameError("the case list has duplicate case ids")
        case_codes = pd.Index(case_list).get_indexer(pd.Index(frame["case_id"]))
    keep = case_codes >= 0
    mat = np.full((len(responders), len(case_list)), MISSING, dtype=np.int8)
    mat[resp_codes[keep], case_codes[keep]] = row_categories(frame)[keep]
    first = np.unique(resp_codes, return_index=True)[1]
    return ResponseMatrix(
        responders=tuple(str(r) for r in responders),
        kinds=tuple(str(k) for k in frame["kind"].to_numpy()[first]),
        groups=tuple(None if pd.isna(g) else str(g) for g in frame["group"].to_numpy()[first]),
        case_ids=tuple(case_list),
        categories=mat,
    )
