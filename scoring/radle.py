"""The five RadLE metrics (SCORING.md section 3), vectorised over count vectors.

Every function takes count vectors of shape (..., 14) (see scoring.categories)
and returns arrays of shape (...). Counts may be fractional (the pool's 1/n_i
weights) and may carry leading bootstrap axes.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from scoring.categories import CORRECT, WRONG, FloatArray, category_points, max_points
from scoring.params import HANDOVER_VARIANTS, SAFETY_VARIANTS, ScoringParams
from scoring.variants import handover_parts

Z_95: Final = 1.959963984540054  # standard normal 97.5% quantile


def radle_c(counts: FloatArray, idk_score: float = 0.0, weight: str = "L+1") -> FloatArray:
    """Confidence Weighted Index, 0..2000: 1000 * (1 + sum(s) / (5N)).

    With ``weight`` ``L`` the points are L and the 5 becomes 4, the most one
    case gives, so all correct at L4 still scores 2000 and all wrong at L4 0.
    """
    n = counts.sum(axis=-1)
    total = counts @ category_points(idk_score, weight)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = 1000.0 * (1.0 + total / (max_points(weight) * n))
    return out


def radle_a(counts: FloatArray) -> FloatArray:
    """Accuracy Index C / N (unanswered, idk and missing count in N)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = counts[..., CORRECT].sum(axis=-1) / counts.sum(axis=-1)
    return out


def attempted_accuracy(counts: FloatArray) -> FloatArray:
    """C / (C + W); NaN when nothing was answered."""
    c = counts[..., CORRECT].sum(axis=-1)
    w = counts[..., WRONG].sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = c / (c + w)
    return out


def wilson_interval(
    successes: FloatArray, n: FloatArray, z: float = Z_95
) -> tuple[FloatArray, FloatArray]:
    """Wilson score interval for a proportion; NaN where n == 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes / n
        denom = 1.0 + z**2 / n
        centre = (p + z**2 / (2.0 * n)) / denom
        half = z / denom * np.sqrt(np.maximum(p * (1.0 - p) / n + z**2 / (4.0 * n**2), 0.0))
    # The bounds are exactly 0 at p = 0 and 1 at p = 1; say so instead of rounding.
    low: FloatArray = np.where(successes <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high: FloatArray = np.where(successes >= n, 1.0, np.clip(centre + half, 0.0, 1.0))
    nan = np.isnan(p)
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def radle_r(counts: FloatArray, tau_high: int = 3) -> FloatArray:
    """Reliability Index C>=tau / (C>=tau + W>=tau); NaN when none at L >= tau."""
    return handover_parts(counts, tau_high)[0]  # R is the same in every H variant


def radle_s(counts: FloatArray, params: ScoringParams) -> FloatArray:
    """Safety Index, 0..100, by the variant named in ``params.s_variant``."""
    return SAFETY_VARIANTS[params.s_variant](counts, params)


def radle_h(counts: FloatArray, params: ScoringParams) -> FloatArray:
    """Handover Readiness Index, 0..100, by the variant named in ``params.h_variant``."""
    return HANDOVER_VARIANTS[params.h_variant](counts, params)


def radle_metrics(counts: FloatArray, params: ScoringParams) -> dict[str, FloatArray]:
    """All five metrics plus their parts: Wilson CI of A, attempted accuracy, Cov, D."""
    n = counts.sum(axis=-1)
    a_low, a_high = wilson_interval(counts[..., CORRECT].sum(axis=-1), n)
    _, coverage, deferral, _ = handover_parts(counts, params.tau_high, params.h_variant)
    return {
        "radle_c": radle_c(counts, params.idk_score, params.weight),
        "radle_a": radle_a(counts),
        "radle_a_wilson_low": a_low,
        "radle_a_wilson_high": a_high,
        "attempted_accuracy": attempted_accuracy(counts),
        "radle_r": radle_r(counts, params.tau_high),
        "radle_s": radle_s(counts, params),
        "radle_h": radle_h(counts, params),
        "h_coverage": coverage,
        "h_deferral": deferral,
    }
