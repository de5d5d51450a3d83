"""The pooled human baseline (SCORING.md section 4).

Each case is one unit: the included readers' rows on case i share weight 1,
each 1 / n_i. The pool's count vector is the sum of these per-case vectors,
so every metric of section 3 applies unchanged, and the bootstrap can
re-weight cases without recomputing anything per reader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.categories import MISSING, N_CATEGORIES, FloatArray, category_points
from scoring.params import ScoringParams
from scoring.points import IntArray, ResponseMatrix, count_vectors

_COMPLETION_TOL = 1e-9  # 199/200 must not beat min_completion = 0.995 by rounding


@dataclass(frozen=True)
class Pool:
    """One pooled baseline: overall (group None) or one reader group."""

    group: str | None
    readers: tuple[str, ...]
    reader_index: npt.NDArray[np.intp]
    contributions: FloatArray  # (cases, 14); each row sums to 1; NaN with no readers

    def counts(self) -> FloatArray:
        """The pool's weighted count vector, shape (14,)."""
        out: FloatArray = self.contributions.sum(axis=0)
        return out

    def case_points(self, idk_score: float = 0.0, weight: str = "L+1") -> FloatArray:
        """s_i, the mean of the included readers' points on each case (0 if none)."""
        out: FloatArray = self.contributions @ category_points(idk_score, weight)
        return out


def pool_members(matrix: ResponseMatrix, min_completion: float) -> npt.NDArray[np.bool_]:
    """Humans whose completion is at least ``min_completion``."""
    human = np.array([k == "human" for k in matrix.kinds], dtype=bool)
    completion = matrix.completion()
    with np.errstate(invalid="ignore"):
        done = completion >= min_completion - _COMPLETION_TOL
    out: npt.NDArray[np.bool_] = human & done
    return out


def case_contributions(categories: IntArray) -> FloatArray:
    """Per-case count vectors of a reader set (readers, cases) -> (cases, 14).

    Reader rows on case i weigh 1 / n_i, n_i = readers with a row on case i.
    A case no reader has a row on counts as ``missing`` (it still is in N).
    With no readers at all the pool is undefined and the result is NaN.
    """
    n_readers, n_cases = categories.shape
    if n_readers == 0:
        return np.full((n_cases, N_CATEGORIES), np.nan)
    per_case = count_vectors(np.ascontiguousarray(categories.T))
    per_case[:, MISSING] = 0.0
    n_i = per_case.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(n_i[:, None] > 0, per_case / n_i[:, None], 0.0)
    out[n_i == 0, MISSING] = 1.0
    return out


def build_pools(matrix: ResponseMatrix, params: ScoringParams) -> list[Pool]:
    """The overall pool first, then one pool per reader group (sorted by name)."""
    members = pool_members(matrix, params.min_completion)
    groups = sorted({g for g, m in zip(matrix.groups, members, strict=True) if m and g is not None})
    pools = []
    for group in [None, *groups]:
        in_pool = members & np.array([group is None or g == group for g in matrix.groups], bool)
        index = np.flatnonzero(in_pool)
        pools.append(
            Pool(
                group=group,
                readers=tuple(matrix.responders[i] for i in index),
                reader_index=index,
                contributions=case_contributions(matrix.categories[index]),
            )
        )
    return pools
