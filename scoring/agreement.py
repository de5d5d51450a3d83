"""Agreement: Fleiss kappa among readers, Cohen kappa between two graders."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from scoring.categories import CORRECT, IDK, WRONG, FloatArray
from scoring.points import IntArray, count_vectors

OUTCOMES = ("correct", "wrong", "idk")


def fleiss_kappa(table: npt.ArrayLike) -> float:
    """Fleiss kappa from a (subjects x categories) table of rater counts.

    Subjects may have different numbers of raters n_i (readers who skipped a
    case): P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1)) over subjects with
    n_i >= 2, p_j from all their ratings. With a constant n this is Fleiss
    (1971) exactly. NaN when no subject has two raters or P_e == 1.
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2:
        raise ValueError("fleiss_kappa needs a 2-D subjects x categories table")
    n_i = counts.sum(axis=1)
    counts = counts[n_i >= 2]
    n_i = n_i[n_i >= 2]
    if len(counts) == 0:
        return float("nan")
    p_i = ((counts**2).sum(axis=1) - n_i) / (n_i * (n_i - 1.0))
    p_j = counts.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    if p_e >= 1.0 - 1e-12:
        return float("nan")
    return (float(p_i.mean()) - p_e) / (1.0 - p_e)


def outcome_table(categories: IntArray) -> FloatArray:
    """(readers, cases) categories -> (cases, 3) counts of correct / wrong / idk.

    Invalid, failure and missing cells are not ratings and are left out.
    """
    per_case = count_vectors(np.ascontiguousarray(categories.T))
    return np.stack(
        [
            per_case[:, CORRECT].sum(axis=1),
            per_case[:, WRONG].sum(axis=1),
            per_case[:, IDK],
        ],
        axis=1,
    )


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    """Cohen kappa between two graders' labels of the same items.

    kappa = (p_o - p_e) / (1 - p_e); NaN for no items or when p_e == 1
    (both graders used one and the same label throughout).
    """
    if len(first) != len(second):
        raise ValueError("both graders must label the same items")
    if len(first) == 0:
        return float("nan")
    labels = sorted({*first, *second}, key=repr)
    index = {label: i for i, label in enumerate(labels)}
    confusion = np.zeros((len(labels), len(labels)))
    np.add.at(confusion, ([index[a] for a in first], [index[b] for b in second]), 1.0)
    total = float(confusion.sum())
    p_o = float(np.trace(confusion)) / total
    p_e = float((confusion.sum(axis=1) * confusion.sum(axis=0)).sum()) / total**2
    if p_e >= 1.0 - 1e-12:
        return float("nan")
    return (p_o - p_e) / (1.0 - p_e)
