"""Model vs reader panel with readers and cases random (docs/analysis.md, "Model vs reader panel").

The U-statistic estimator of Gallas (2009, Commun Stat A 38:2586; components of
variance by nested conditional means as in Gallas et al. 2007, JOSA A 24:B70), as
the FDA's iMRMC implements it in ``uStat11.conditionalD`` with ``kernelFlag = 1``
(the identity kernel: the reader-and-case-averaged mean of a per-observation
score). Written from the published method and checked against iMRMC 2.1.2's
figures (tests/scoring/test_mrmc.py); no iMRMC code is copied.

A study is two cases x readers arrays per arm ("modality"): the kernel (the score
of reader r on case i) and the design (1 where that observation exists, else 0).
Missing pairs are zeros of the design: every moment is averaged over the pairs
that exist, each reader weighted by its number of observations, so readers with
missing cases ("incomplete readers") are used as they are, with no imputation.
The mean of an arm is then sum(kernel) / sum(design): every observed
(reader, case) pair weighs the same.

The model is a fixed reader: its answers are repeated under every reader's id
(the model's column is the same for every reader), so the model arm has case
variance only and the difference's variance carries the readers' variance and
the reader-case covariance of the panel. ``model_vs_pool`` does that for every
model of a ``ResponseMatrix`` against the human pool, for RadLE-A (score 1 for a
correct answer, else 0) and RadLE-C (the points s of SCORING.md section 2;
C = 1000 * (1 + mean s / 5), so its variance is 200^2 times that of mean s).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from scoring.categories import CORRECT_0, MISSING, N_LEVELS, FloatArray, max_points
from scoring.params import ScoringParams
from scoring.points import ResponseMatrix

MRMC_METRICS: Final = ("radle_a", "radle_c")
Z_975: Final = 1.959963984540054  # the standard normal's 97.5 % quantile


@dataclass(frozen=True)
class UStat11:
    """Means and variances of the means of two arms and of their difference A - B."""

    mean_a: float
    mean_b: float
    var_a: float
    var_b: float
    var_diff: float
    n_readers: int  # readers with an observation in either arm
    n_cases: int  # cases with an observation in either arm

    @property
    def mean_diff(self) -> float:
        return self.mean_a - self.mean_b


def _div(numer: FloatArray, denom: FloatArray) -> FloatArray:
    """numer / denom, NaN where denom is 0 (every such numer is 0 too: 0/0)."""
    out = np.full(np.broadcast(numer, denom).shape, np.nan)
    np.divide(numer, denom, out=out, where=np.broadcast_to(denom != 0, out.shape))
    return out


def _off_diag_sum(matrix: FloatArray) -> float:
    """Sum of the finite entries off the diagonal."""
    return float(np.nansum(matrix) - np.nansum(np.diag(matrix)))


def _nan_matmul(left: FloatArray, right: FloatArray) -> FloatArray:
    """left.T @ right where a NaN anywhere in a column of ``left`` (``right``) makes the
    whole row (column) of the product NaN, as IEEE arithmetic does, whatever BLAS skips."""
    out: FloatArray = np.nan_to_num(left).T @ np.nan_to_num(right)
    out[np.isnan(left).any(axis=0), :] = np.nan
    out[:, np.isnan(right).any(axis=0)] = np.nan
    return out


@dataclass(frozen=True)
class _Arm:
    kernel: FloatArray  # (cases, readers), 0 where the design is 0
    design: FloatArray
    per_reader_n: FloatArray  # observations of each reader
    weight: FloatArray  # each reader's share of the arm's observations
    rest_mean: FloatArray  # (cases, readers): the reader's mean over its other cases

    @classmethod
    def of(cls, kernel: FloatArray, design: FloatArray) -> _Arm:
        k = kernel * design
        n = design.sum(axis=0)
        rest_mean = _div(k.sum(axis=0)[None, :] - k, n[None, :] - design)
        return cls(k, design, n, n / n.sum(), rest_mean)


def _moments(x: _Arm, y: _Arm, same: bool) -> tuple[FloatArray, FloatArray]:
    """The four second-order moments (c1r1, c0r1, c1r0, c0r0: 1 = the same case or
    reader, 0 = a different one) of arms x and y, and their coefficients in the
    variance of the mean (the last one includes minus the squared mean)."""
    w_rr = x.weight if same else np.sqrt(x.weight * y.weight)  # one reader in both arms
    ww = np.outer(x.weight, y.weight)
    kk = x.kernel.T @ y.kernel  # (readers, readers): sum over the common cases
    dd = x.design.T @ y.design
    nn = np.outer(x.per_reader_n, y.per_reader_n)
    share = _div(dd, nn)  # the share of pairs of observations on one case
    with np.errstate(invalid="ignore"):
        same_case = _div(np.diag(kk), np.diag(dd))
        other_case = np.nansum(x.kernel * y.rest_mean, axis=0) / x.per_reader_n
        both_other = _nan_matmul(x.kernel / x.per_reader_n[None, :], y.rest_mean)
    moments = np.zeros(4)
    denoms = (w_rr.sum(), w_rr.sum(), _off_diag_sum(ww), _off_diag_sum(ww))
    numers = (
        float(np.nansum(w_rr * same_case)),
        float(np.nansum(w_rr * other_case)),
        _off_diag_sum(ww * _div(kk, dd)),
        _off_diag_sum(ww * both_other),
    )
    for j, (numer, denom) in enumerate(zip(numers, denoms, strict=True)):
        moments[j] = numer / denom if denom else 0.0
    wxy = x.weight * y.weight
    coeff = np.array(
        [
            np.nansum(wxy * np.diag(share)),
            np.nansum(wxy * (1.0 - np.diag(share))),
            _off_diag_sum(ww * share),
            _off_diag_sum(ww * (1.0 - share)) - 1.0,
        ]
    )
    return moments, coeff


def u_stat11(
    kernel_a: npt.ArrayLike,
    design_a: npt.ArrayLike,
    kernel_b: npt.ArrayLike,
    design_b: npt.ArrayLike,
    *,
    var_b: float | None = None,
) -> UStat11:
    """Mean and variance of the mean of arms A and B and of A - B (readers and cases random).

    Each argument is a (cases, readers) array over the same cases and readers; a
    design is 0/1 and a kernel's entries where its design is 0 are ignored. An arm
    with no observation gives NaN figures. ``var_b``: B's variance when already
    known (it depends on B alone), so many comparisons with one B compute it once.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in (kernel_a, design_a, kernel_b, design_b)]
    shape = arrays[0].shape
    if len(shape) != 2 or any(a.shape != shape for a in arrays):
        raise ValueError(
            f"kernels and designs must be (cases, readers) arrays of one shape: "
            f"{[a.shape for a in arrays]}"
        )
    for design in arrays[1::2]:
        if not np.isin(design, (0.0, 1.0)).all():
            raise ValueError("a design holds 0 (no observation) or 1 only")
    for kernel, design in zip(arrays[0::2], arrays[1::2], strict=True):
        _finite_where_observed(kernel, design)
    seen = (arrays[1] + arrays[3]) > 0
    n_readers, n_cases = int(seen.any(axis=0).sum()), int(seen.any(axis=1).sum())
    if arrays[1].sum() == 0 or arrays[3].sum() == 0:
        nan = float("nan")
        return UStat11(nan, nan, nan, nan, nan, n_readers, n_cases)
    a = _Arm.of(np.where(arrays[1] == 1, arrays[0], 0.0), arrays[1])
    b = _Arm.of(np.where(arrays[3] == 1, arrays[2], 0.0), arrays[3])
    return _u_stat11_of(a, b, n_readers, n_cases, var_b)


def _finite_where_observed(kernel: np.ndarray, design: np.ndarray) -> None:
    if not np.isfinite(kernel[design == 1]).all():
        raise ValueError("a kernel must be finite wherever its design is 1")


def _u_stat11_of(a: _Arm, b: _Arm, n_readers: int, n_cases: int, var_b: float | None) -> UStat11:
    """``u_stat11`` of two arms already checked and built (each with an observation)."""
    var = []
    for x, y, same in ((a, a, True), (b, b, True), (a, b, False)):
        if y is b and same and var_b is not None:
            var.append(var_b)
            continue
        moments, coeff = _moments(x, y, same)
        var.append(float(coeff @ moments))
    return UStat11(
        mean_a=float(a.kernel.sum() / a.design.sum()),
        mean_b=float(b.kernel.sum() / b.design.sum()),
        var_a=var[0],
        var_b=var[1],
        var_diff=var[0] + var[1] - 2.0 * var[2],
        n_readers=n_readers,
        n_cases=n_cases,
    )


def normal_test(diff: float, var: float) -> tuple[float, float, float, float]:
    """(se, 95 % interval low, high, two-sided p) of a normal estimate with variance ``var``.

    NaN throughout for a NaN or negative variance (possible, if rarely, for an
    unbiased estimate on very few readers); a zero variance gives a zero-width
    interval and p = 0 (1 when diff is also 0).
    """
    if not math.isfinite(var) or var < 0 or not math.isfinite(diff):
        nan = float("nan")
        return nan, nan, nan, nan
    se = math.sqrt(var)
    if se == 0:
        return 0.0, diff, diff, 1.0 if diff == 0 else 0.0
    p = math.erfc(abs(diff / se) / math.sqrt(2.0))
    return se, diff - Z_975 * se, diff + Z_975 * se, p


def _sqrt(var: float) -> float:
    return math.sqrt(var) if math.isfinite(var) and var >= 0 else math.nan


def metric_kernels(
    matrix: ResponseMatrix, params: ScoringParams
) -> dict[str, tuple[FloatArray, float, float]]:
    """Per (responder, case) value of each MRMC metric, with the affine map
    (offset, scale) from the mean of that value to the metric."""
    codes = matrix.categories
    correct = ((codes >= CORRECT_0) & (codes < CORRECT_0 + N_LEVELS)).astype(np.float64)
    c_scale = 1000.0 / max_points(params.weight)
    return {
        "radle_a": (correct, 0.0, 1.0),
        "radle_c": (matrix.points(params.idk_score, params.weight), 1000.0, c_scale),
    }


def model_vs_pool(
    matrix: ResponseMatrix,
    readers: Sequence[int] | npt.NDArray[np.intp],
    params: ScoringParams | None = None,
) -> list[dict[str, Any]]:
    """One entry per model and metric: model minus pool, readers and cases random, model fixed.

    ``readers`` are the rows of ``matrix`` in the human pool (e.g. ``Pool.reader_index``);
    their cases without a row are missing pairs of the design. The model's row is
    repeated under every reader's id; a case the model has no row on counts as a
    wrong answer with 0 points, as RadLE-A and RadLE-C count it.
    Entries: ``model``, ``metric``, ``diff``, ``mrmc_se``, ``mrmc_ci_low``,
    ``mrmc_ci_high``, ``mrmc_p``, ``model_value``, ``model_mrmc_se`` (case variance
    only), ``pool_value``, ``pool_mrmc_se`` (readers and cases random),
    ``mrmc_readers``, ``mrmc_cases``. With fewer than two readers every figure but
    the values is NaN (the readers' variance cannot be estimated).
    """
    params = params or ScoringParams()
    index = np.asarray(readers, dtype=np.intp)
    models = [i for i, k in enumerate(matrix.kinds) if k == "model"]
    design_h = (matrix.categories[index] != MISSING).T.astype(np.float64)  # (cases, readers)
    ones = np.ones_like(design_h)
    out: list[dict[str, Any]] = []
    kernels = metric_kernels(matrix, params)
    var_pool: dict[str, float] = {}  # the pool's variance, the same for every model
    # the pool's arm per metric, the same for every model: checked and built once (with
    # 50 models on 5,000 cases, building it for each comparison took a third of the time)
    pool_arm: dict[str, _Arm] = {}
    if models and len(index) and design_h.sum() > 0:
        for metric in MRMC_METRICS:
            human = kernels[metric][0][index].T
            _finite_where_observed(human, design_h)
            pool_arm[metric] = _Arm.of(np.where(design_h == 1, human, 0.0), design_h)
    for m in models:
        for metric in MRMC_METRICS:
            values, offset, scale = kernels[metric]
            if metric in pool_arm and np.isfinite(values[m]).all():
                # the model's row under every reader: every (case, reader) pair observed
                model = _Arm.of(np.repeat(values[m][:, None], len(index), axis=1), ones)
                stat = _u_stat11_of(
                    model, pool_arm[metric], len(index), len(values[m]), var_pool.get(metric)
                )
            else:  # no pool, or a model value u_stat11 refuses: its own checks and NaNs
                human = values[index].T
                model_values = np.repeat(values[m][:, None], len(index), axis=1)
                stat = u_stat11(model_values, ones, human, design_h, var_b=var_pool.get(metric))
            var_pool[metric] = stat.var_b
            n_ok = stat.n_readers >= 2 and stat.n_cases >= 2
            var_diff = stat.var_diff if n_ok else float("nan")
            diff = scale * stat.mean_diff
            se, low, high, p = normal_test(diff, scale**2 * var_diff)
            out.append(
                {
                    "model": matrix.responders[m],
                    "metric": metric,
                    "diff": diff,
                    "mrmc_se": se,
                    "mrmc_ci_low": low,
                    "mrmc_ci_high": high,
                    "mrmc_p": p,
                    "model_value": offset + scale * stat.mean_a,
                    "model_mrmc_se": scale * _sqrt(stat.var_a) if n_ok else math.nan,
                    "pool_value": offset + scale * stat.mean_b,
                    "pool_mrmc_se": scale * _sqrt(stat.var_b) if n_ok else math.nan,
                    "mrmc_readers": stat.n_readers,
                    "mrmc_cases": stat.n_cases,
                }
            )
    return out
