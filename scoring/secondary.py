"""Secondary figures (SCORING.md section 3): profile, calibration, risk-coverage.

All functions map count vectors (..., 14) to arrays (...). Calibration uses
p = L / 4 over answered rows. Counts may be fractional (pool weights); the
formulas below are written so that they stay meaningful with weights.
"""

from __future__ import annotations

import numpy as np

from scoring.categories import (
    CATEGORY_NAMES,
    CORRECT,
    FAILURE,
    IDK,
    INVALID,
    LEVELS,
    MISSING,
    N_LEVELS,
    WRONG,
    FloatArray,
)

THRESHOLDS = tuple(range(N_LEVELS - 1, -1, -1))  # 4, 3, 2, 1, 0


def _safe_div(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(den > 0, num / den, np.nan)
    return out


def response_profile(counts: FloatArray) -> dict[str, FloatArray]:
    """Counts of correct and wrong per Likert level, idk, invalid, failure, missing."""
    out = {f"n_{name}": counts[..., i] for i, name in enumerate(CATEGORY_NAMES)}
    out["n_correct"] = counts[..., CORRECT].sum(axis=-1)
    out["n_wrong"] = counts[..., WRONG].sum(axis=-1)
    out["n_answered"] = out["n_correct"] + out["n_wrong"]
    return out


def likert_accuracy(counts: FloatArray) -> FloatArray:
    """Accuracy at each Likert level, shape (..., 5); NaN for unused levels."""
    c = counts[..., CORRECT]
    return _safe_div(c, c + counts[..., WRONG])


def brier_score(counts: FloatArray) -> FloatArray:
    """Mean of (L/4 - y)^2 over answered rows."""
    p = LEVELS / 4.0
    loss = (counts[..., CORRECT] * (p - 1.0) ** 2 + counts[..., WRONG] * p**2).sum(axis=-1)
    return _safe_div(loss, (counts[..., CORRECT] + counts[..., WRONG]).sum(axis=-1))


def expected_calibration_error(counts: FloatArray) -> FloatArray:
    """ECE = sum_L n_L / n * |acc_L - L/4|  ( = sum_L |c_L - n_L L/4| / n )."""
    c = counts[..., CORRECT]
    n_level = c + counts[..., WRONG]
    gap = np.abs(c - n_level * LEVELS / 4.0).sum(axis=-1)
    return _safe_div(gap, n_level.sum(axis=-1))


def spearman_rho(counts: FloatArray) -> FloatArray:
    """Spearman rho between Likert and correctness over answered rows.

    Computed exactly from the 5 x 2 table: Likert gets mid-ranks, and since
    correctness is binary its ranks are an affine map of y, so rho is the
    Pearson correlation of (mid-rank of L, y). Mid-ranks are cum + n_L / 2,
    a constant shift of the usual cum + (n_L + 1) / 2, which rho ignores.
    NaN when either variable is constant.
    """
    c = counts[..., CORRECT]
    n_level = c + counts[..., WRONG]
    n = n_level.sum(axis=-1)
    ranks = np.cumsum(n_level, axis=-1) - n_level / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_r = (n_level * ranks).sum(axis=-1) / n
        p1 = c.sum(axis=-1) / n
        cov = (c * ranks).sum(axis=-1) / n - mean_r * p1
        var_r = (n_level * ranks**2).sum(axis=-1) / n - mean_r**2
        var_y = p1 * (1.0 - p1)
        den = np.sqrt(np.maximum(var_r, 0.0) * var_y)
    # Relative tolerance: var_r is a difference of large sums.
    degenerate = ~(var_r > 1e-12 * np.maximum(mean_r**2, 1.0)) | ~(var_y > 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho: FloatArray = np.where(degenerate, np.nan, np.clip(cov / den, -1.0, 1.0))
    return rho


def risk_coverage(counts: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(coverage, selective risk) at thresholds 4, 3, 2, 1, 0; shapes (..., 5).

    coverage_t = answered rows with L >= t / N; risk_t = wrong / answered at L >= t.
    """
    c = counts[..., CORRECT][..., ::-1]  # level 4 first
    w = counts[..., WRONG][..., ::-1]
    answered = np.cumsum(c + w, axis=-1)
    wrong = np.cumsum(w, axis=-1)
    coverage = _safe_div(answered, counts.sum(axis=-1)[..., None])
    return coverage, _safe_div(wrong, answered)


def aurc(counts: FloatArray) -> FloatArray:
    """Area under the risk-coverage step curve; NaN when nothing was answered.

    Rows at one Likert level enter together, so each coverage step is charged
    the selective risk at its threshold (right-endpoint sum). Trapezoids would
    give 0 area to a responder who answers everything at one level.
    """
    coverage, risk = risk_coverage(counts)
    steps = np.diff(coverage, axis=-1, prepend=0.0)
    area = np.where(steps > 0, steps * np.nan_to_num(risk), 0.0).sum(axis=-1)
    answered = (counts[..., CORRECT] + counts[..., WRONG]).sum(axis=-1)
    out: FloatArray = np.where(answered > 0, area, np.nan)
    return out


def secondary_metrics(counts: FloatArray) -> dict[str, FloatArray]:
    """Profile, rates, calibration and risk-coverage figures, as flat named arrays."""
    n = counts.sum(axis=-1)
    out = response_profile(counts)
    out["idk_rate"] = _safe_div(counts[..., IDK], n)
    out["invalid_rate"] = _safe_div(counts[..., INVALID], n)
    out["failure_rate"] = _safe_div(counts[..., FAILURE], n)
    out["missing_rate"] = _safe_div(counts[..., MISSING], n)
    acc = likert_accuracy(counts)
    for level in range(N_LEVELS):
        out[f"accuracy_l{level}"] = acc[..., level]
    out["likert4_accuracy"] = acc[..., N_LEVELS - 1]
    out["confident_error_rate"] = _safe_div(counts[..., WRONG][..., N_LEVELS - 1], n)
    out["brier"] = brier_score(counts)
    out["ece"] = expected_calibration_error(counts)
    out["spearman_rho"] = spearman_rho(counts)
    coverage, risk = risk_coverage(counts)
    for i, t in enumerate(THRESHOLDS):
        out[f"rc_coverage_l{t}"] = coverage[..., i]
        out[f"rc_risk_l{t}"] = risk[..., i]
    out["aurc"] = aurc(counts)
    return out
