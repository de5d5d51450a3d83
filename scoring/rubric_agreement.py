"""Agreement between report graders (SCORING.md sections 5 and 6): ICC(2,1) on the 0-40
scores, weighted Cohen kappa on the ordered tiers, and the 0-40 histogram.

ICC(2,1) is Shrout and Fleiss's two-way random effects, absolute agreement,
single rater: (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n) over the n
reports every grader scored (rows with a missing score are left out).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.rubric import RUBRIC_MAX, TIERS, rubric_tier

WEIGHTS = ("quadratic", "linear")


def icc_2_1(scores: npt.ArrayLike) -> float:
    """ICC(2,1) of an (n reports x k graders) array; NaN below 2 complete rows or 2 graders,
    or when every score is the same (no variance to explain)."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("scores must be a 2-D array: reports x graders")
    x = x[~np.isnan(x).any(axis=1)]
    n, k = x.shape
    if n < 2 or k < 2:
        return float("nan")
    grand = x.mean()
    ss_rows = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_error = float(((x - grand) ** 2).sum()) - ss_rows - ss_cols
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_error / ((n - 1) * (k - 1))
    denominator = msr + (k - 1) * mse + k * (msc - mse) / n
    return float("nan") if denominator == 0 else float((msr - mse) / denominator)


def weighted_kappa(
    first: Sequence[object],
    second: Sequence[object],
    categories: Sequence[object],
    weights: str = "quadratic",
) -> float:
    """Cohen's weighted kappa of two graders over ordered ``categories``: 1 - sum(w O) /
    sum(w E), w_ij = (|i - j| / (K - 1)) ** p with p = 2 (quadratic) or 1 (linear)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")
    if len(first) != len(second):
        raise ValueError("both graders need the same number of ratings")
    index = {c: i for i, c in enumerate(categories)}
    unknown = {v for v in (*first, *second) if v not in index}
    if unknown:
        raise ValueError(f"ratings outside the categories: {sorted(map(str, unknown))}")
    size = len(categories)
    if len(first) == 0 or size < 2:
        return float("nan")
    observed = np.zeros((size, size))
    for a, b in zip(first, second, strict=True):
        observed[index[a], index[b]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((size, size))
    w = (np.abs(i - j) / (size - 1)) ** (2 if weights == "quadratic" else 1)
    chance = float((w * expected).sum())
    return float("nan") if chance == 0 else float(1 - (w * observed).sum() / chance)


def tier_kappa(first: Sequence[int], second: Sequence[int]) -> float:
    """Quadratic-weighted kappa on the six tiers of two graders' 0-40 scores."""
    names = [name for name, _, _ in reversed(TIERS)]  # fail .. exceptional: ordered
    return weighted_kappa(
        [rubric_tier(int(s)) for s in first], [rubric_tier(int(s)) for s in second], names
    )


def score_histogram(
    frame: pd.DataFrame, score_column: str = "rubric", responder_column: str = "responder"
) -> pd.DataFrame:
    """Long frame: responder, score (every integer 0..40), count, tier: the shape of each
    responder's distribution, zeros included so every histogram has the same axis."""
    scores = pd.DataFrame(
        {
            "responder": frame[responder_column].astype(str).to_numpy(),
            "score": pd.to_numeric(frame[score_column]).astype(int).to_numpy(),
        }
    )
    counts = scores.groupby(["responder", "score"]).size()
    responders = sorted(scores["responder"].unique())
    full = pd.MultiIndex.from_product(
        [responders, range(RUBRIC_MAX + 1)], names=["responder", "score"]
    )
    out = counts.reindex(full, fill_value=0).rename("count").reset_index()
    out["tier"] = [rubric_tier(int(s)) for s in out["score"]]
    return out
