"""Paired sign-flip permutation test, model vs pool (SCORING.md section 5).

d_i = s_model,i - s_i; T = sum_i d_i; under H0 each d_i is as likely to have
either sign, so p = (1 + #{|T*| >= |T|}) / (B + 1) over B random sign flips.
"""

from __future__ import annotations

import numpy as np

from scoring.bootstrap import PERMUTATION_STREAM, rng_for
from scoring.categories import FloatArray

_REL_TOL = 1e-9  # |T*| == |T| must count even after float rounding


def sign_flip_test(diffs: FloatArray, n_perm: int, seed: int = 0) -> FloatArray:
    """Two-sided p-values for per-case differences.

    diffs: (cases,) or (cases, comparisons); all comparisons share the same
    sign flips, so they are computed in one product. Returns shape () or
    (comparisons,); NaN when n_perm == 0 or there are no cases.
    """
    d = np.asarray(diffs, dtype=np.float64)
    single = d.ndim == 1
    d2 = d[:, None] if single else d
    n_cases, n_comp = d2.shape
    if n_perm == 0 or n_cases == 0:
        out = np.full(n_comp, np.nan)
        return out[0] if single else out
    rng = rng_for(seed, PERMUTATION_STREAM)
    signs = rng.integers(0, 2, size=(n_perm, n_cases), dtype=np.int8) * 2 - 1
    observed = np.abs(d2.sum(axis=0))
    permuted = np.abs(signs.astype(np.float64) @ d2)  # (B, comparisons)
    scale = np.abs(d2).sum(axis=0)
    hits = (permuted >= observed - _REL_TOL * np.maximum(scale, 1.0)).sum(axis=0)
    p: FloatArray = (1.0 + hits) / (n_perm + 1.0)
    return p[0] if single else p
