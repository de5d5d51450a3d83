"""Versioned RadLE-S and RadLE-H formulas, selectable by name.

RadLE-S and RadLE-H have no published formula (SCORING.md preamble): ours are
variant "1.0". A study that needs another registers it and names it in
``ScoringParams(s_variant=..., h_variant=...)``; reports record the names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from scoring.categories import CORRECT, WRONG, FloatArray, high_counts, level_weights


class VariantParams(Protocol):
    """What a variant reads of ``scoring.params.ScoringParams`` (which imports this
    module: the parameters come in by shape, so no import runs back)."""

    @property
    def weight(self) -> str: ...

    @property
    def tau_high(self) -> int: ...

    @property
    def h_aggregate(self) -> str: ...


# A variant maps count vectors (..., 14) and the parameters to values (...).
VariantFn = Callable[[FloatArray, VariantParams], FloatArray]


def handover_parts(counts: FloatArray, tau_high: int) -> tuple[FloatArray, ...]:
    """(R, Cov, D, answered at L >= tau_high) of SCORING.md section 3."""
    n = counts.sum(axis=-1)
    n_correct = counts[..., CORRECT].sum(axis=-1)
    c_hi, w_hi = high_counts(counts, tau_high)
    answered_hi = c_hi + w_hi
    potential = n - n_correct  # everything not correct could have been an error
    with np.errstate(divide="ignore", invalid="ignore"):
        reliability = c_hi / answered_hi
        coverage = answered_hi / n
        # D = 1 when N == C: nothing could have gone wrong, nothing to hand over.
        deferral = np.where(potential > 1e-12, 1.0 - w_hi / potential, 1.0)
    deferral = np.where(n > 0, deferral, np.nan)
    return reliability, coverage, deferral, answered_hi


def safety_v1(counts: FloatArray, params: VariantParams) -> FloatArray:
    """RadLE-S 1.0: 100 * (1 - E / (5N)), E = sum over wrong rows of (L + 1).

    Under ``params.weight`` ``L``: E sums L, over 4N (the penalty half of C again).
    """
    n = counts.sum(axis=-1)
    weights = level_weights(params.weight)
    penalty = (counts[..., WRONG] * weights).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = 100.0 * (1.0 - penalty / (float(weights[-1]) * n))
    return out


def handover_v1(counts: FloatArray, params: VariantParams) -> FloatArray:
    """RadLE-H 1.0: 100 x the geometric/harmonic/arithmetic mean of R, Cov and D."""
    reliability, coverage, deferral, answered_hi = handover_parts(counts, params.tau_high)
    parts = np.stack(np.broadcast_arrays(reliability, coverage, deferral))
    with np.errstate(divide="ignore", invalid="ignore"):
        if params.h_aggregate == "geometric":
            agg = np.cbrt(parts.prod(axis=0))
        elif params.h_aggregate == "harmonic":
            agg = np.where(parts.min(axis=0) > 0, 3.0 / (1.0 / parts).sum(axis=0), 0.0)
        else:
            agg = parts.mean(axis=0)
    n = counts.sum(axis=-1)
    # H = 0 when nothing was answered at L >= tau_high (R is undefined there).
    out: FloatArray = np.where(answered_hi > 0, 100.0 * agg, np.where(n > 0, 0.0, np.nan))
    return out


SAFETY_VARIANTS: dict[str, VariantFn] = {"1.0": safety_v1}
HANDOVER_VARIANTS: dict[str, VariantFn] = {"1.0": handover_v1}


def register_safety_variant(name: str, fn: VariantFn) -> None:
    """Make a RadLE-S variant selectable with ``ScoringParams(s_variant=name)``."""
    _register(SAFETY_VARIANTS, name, fn)


def register_handover_variant(name: str, fn: VariantFn) -> None:
    """Make a RadLE-H variant selectable with ``ScoringParams(h_variant=name)``."""
    _register(HANDOVER_VARIANTS, name, fn)


def _register(registry: dict[str, VariantFn], name: str, fn: VariantFn) -> None:
    # Silently replacing a variant would change published numbers under the same name.
    if name in registry and registry[name] is not fn:
        raise ValueError(f"variant {name!r} is already registered")
    registry[name] = fn
