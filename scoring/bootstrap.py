"""Paired case bootstrap and two-way (readers x cases) bootstrap (SCORING.md 5).

A resample is a row of a (B x cases) multiplicity matrix W (how often each
case was drawn). Every arm's count vectors on every resample come out of one
matrix product per category: onehot(categories == k) @ W.T. Pools use their
per-case contribution vectors, so the pool is recomputed on each resample
from the per-case means. No Python loop runs per replicate or per responder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from scoring.categories import MISSING, N_CATEGORIES, FloatArray
from scoring.params import ScoringParams
from scoring.points import IntArray, ResponseMatrix
from scoring.pool import Pool

CASE_STREAM: Final = 0  # independent RNG streams derived from one seed
READER_STREAM: Final = 1
PERMUTATION_STREAM: Final = 2
_CHUNK_ELEMENTS: Final = 1 << 22  # bounds the (chunk x cases) temporaries of two-way


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """A generator per purpose, so adding one draw never shifts another."""
    return np.random.default_rng([seed, stream])


def resample_weights(n_items: int, n_boot: int, rng: np.random.Generator) -> FloatArray:
    """(B x n_items) multiplicities of a with-replacement resample of the items.

    Drawn as a (B x n_items) index matrix, then counted per row.
    """
    if n_items == 0:
        return np.zeros((n_boot, 0))
    index = rng.integers(0, n_items, size=(n_boot, n_items))
    flat = (np.arange(n_boot)[:, None] * n_items + index).ravel()
    counts = np.bincount(flat, minlength=n_boot * n_items)
    return counts.reshape(n_boot, n_items).astype(np.float64)


def responder_counts(categories: IntArray, weights: FloatArray) -> FloatArray:
    """Count vectors of every responder on every resample, shape (B, responders, 14).

    float32 is exact here: 0/1 times integer multiplicities summed over fewer
    than 2**24 cases; it halves the time of the products.
    """
    w_t = np.ascontiguousarray(weights.T, dtype=np.float32)
    out = np.empty((weights.shape[0], categories.shape[0], N_CATEGORIES))
    for k in range(N_CATEGORIES):  # 14 matrix products, independent of B and responders
        out[:, :, k] = ((categories == k).astype(np.float32) @ w_t).T
    return out


def pool_counts(contributions: FloatArray, weights: FloatArray) -> FloatArray:
    """A pool's count vector on every resample, shape (B, 14)."""
    out: FloatArray = weights @ contributions
    return out


def two_way_pool_counts(
    categories: IntArray, case_weights: FloatArray, reader_weights: FloatArray
) -> FloatArray:
    """Pool count vectors when readers are resampled too, shape (B, 14).

    categories: (readers, cases) of the pool's readers; reader_weights: (B, readers)
    multiplicities. On resample b, case i's contribution is the reader-weighted
    share of each category among readers with a row on i (missing if none).
    """
    n_boot, n_cases = case_weights.shape
    out = np.zeros((n_boot, N_CATEGORIES))
    if categories.shape[0] == 0:
        return np.full((n_boot, N_CATEGORIES), np.nan)
    has_row = (categories != MISSING).astype(np.float64)
    step = max(1, _CHUNK_ELEMENTS // max(n_cases, 1))
    for start in range(0, n_boot, step):  # memory chunks, not a per-replicate loop
        v = reader_weights[start : start + step]
        w = case_weights[start : start + step]
        n_i = v @ has_row
        inv = np.divide(1.0, n_i, out=np.zeros_like(n_i), where=n_i > 0)
        for k in range(N_CATEGORIES):
            if k == MISSING:
                out[start : start + step, k] = (w * (n_i == 0)).sum(axis=1)
            else:
                share = (v @ (categories == k).astype(np.float64)) * inv
                out[start : start + step, k] = (w * share).sum(axis=1)
    return out


def percentile_ci(samples: FloatArray, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
    """Percentile interval along axis 0, ignoring NaN replicates (numpy 'linear').

    Vectorised replacement for np.nanpercentile, which loops per column.
    """
    alpha = (1.0 - level) / 2.0
    ordered = np.sort(samples, axis=0)  # NaN sort last
    valid = (~np.isnan(samples)).sum(axis=0)
    bounds = []
    for q in (alpha, 1.0 - alpha):
        pos = q * np.maximum(valid - 1, 0)
        lo = np.floor(pos).astype(np.intp)
        hi = np.minimum(lo + 1, np.maximum(valid - 1, 0))
        frac = pos - lo
        lo_v = np.take_along_axis(ordered, lo[None], axis=0)[0]
        hi_v = np.take_along_axis(ordered, hi[None], axis=0)[0]
        bounds.append(np.where(valid > 0, lo_v + frac * (hi_v - lo_v), np.nan))
    return bounds[0], bounds[1]


def case_weights_for(n_cases: int, n_boot: int, seed: int) -> FloatArray:
    """The shared case resample of a paired bootstrap, from the study seed."""
    return resample_weights(n_cases, n_boot, rng_for(seed, CASE_STREAM))


def bootstrap_counts(
    matrix: ResponseMatrix, pools: Sequence[Pool], params: ScoringParams
) -> tuple[FloatArray, FloatArray]:
    """Count vectors on every resample: responders (B, R, 14) and pools (B, P, 14).

    All arms see the same case resample (paired). With ``bootstrap_mode ==
    "two-way"`` each pool also resamples its own readers; responders are
    only case-resampled.
    """
    n_boot = params.n_boot
    weights = case_weights_for(matrix.n_cases, n_boot, params.seed)
    responders = responder_counts(matrix.categories, weights)
    reader_rng = rng_for(params.seed, READER_STREAM)
    per_pool = []
    for pool in pools:  # a handful of pools: overall + groups
        if params.bootstrap_mode == "two-way":
            readers = resample_weights(len(pool.readers), n_boot, reader_rng)
            cats = matrix.categories[pool.reader_index]
            per_pool.append(two_way_pool_counts(cats, weights, readers))
        else:
            per_pool.append(pool_counts(pool.contributions, weights))
    pooled = np.stack(per_pool, axis=1) if per_pool else np.zeros((n_boot, 0, N_CATEGORIES))
    return responders, pooled
