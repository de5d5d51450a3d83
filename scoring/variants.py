"""Versioned RadLE-S and RadLE-H formulas, selectable by name.

RadLE-S and RadLE-H have no published formula (SCORING.md preamble). RadLE-S
is variant "1.0"; RadLE-H is "v2" (SCORING.md section 3, the default: it
reproduces the one published H) or "v1" (the earlier definition, also known by
its old name "1.0"). A study that needs another registers it and names it in
``ScoringParams(s_variant=..., h_variant=...)``; reports record the names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

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
    def h_aggregate(self) -> str | None: ...  # None: the variant's own mean


# A variant maps count vectors (..., 14) and the parameters to values (...).
VariantFn = Callable[[FloatArray, VariantParams], FloatArray]


def handover_parts(
    counts: FloatArray, tau_high: int, h_variant: str = "v2"
) -> tuple[FloatArray, ...]:
    """(R, Cov, D, answered at L >= tau_high) of SCORING.md section 3.

    D by ``h_variant``: "v2" (and any variant not named v1) the share of wrong
    answers handed over, (W - W>=tau) / W, 1 when W = 0; "v1" / "1.0"
    1 - W>=tau / (N - C), which also counts IDK, failures and missing as
    handed-over errors, 1 when N == C.
    """
    if h_variant not in V1_NAMES:
        return _handover_parts_v2(counts, tau_high)
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


def _handover_parts_v2(counts: FloatArray, tau_high: int) -> tuple[FloatArray, ...]:
    n = counts.sum(axis=-1)
    wrong = counts[..., WRONG].sum(axis=-1)
    c_hi, w_hi = high_counts(counts, tau_high)
    answered_hi = c_hi + w_hi
    with np.errstate(divide="ignore", invalid="ignore"):
        reliability = c_hi / answered_hi
        coverage = answered_hi / n
        # D = 1 when W == 0: no wrong answer, none that should have been handed over.
        deferral = np.where(wrong > 1e-12, (wrong - w_hi) / wrong, 1.0)
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


def handover_v2(counts: FloatArray, params: VariantParams) -> FloatArray:
    """RadLE-H v2 (SCORING.md section 3, the default): 100 x the mean (harmonic by
    default, ``params.h_aggregate``) of R, Cov and D = (W - W>=tau) / W."""
    return _handover(counts, params, "v2")


def handover_v1(counts: FloatArray, params: VariantParams) -> FloatArray:
    """RadLE-H v1 (formerly "1.0"): 100 x the mean (geometric by default) of R, Cov
    and D = 1 - W>=tau / (N - C)."""
    return _handover(counts, params, "v1")


def _handover(counts: FloatArray, params: VariantParams, variant: str) -> FloatArray:
    reliability, coverage, deferral, answered_hi = handover_parts(counts, params.tau_high, variant)
    parts = np.stack(np.broadcast_arrays(reliability, coverage, deferral))
    mean = params.h_aggregate or default_h_aggregate(variant)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mean == "geometric":
            agg = np.cbrt(parts.prod(axis=0))
        elif mean == "harmonic":
            agg = np.where(parts.min(axis=0) > 0, 3.0 / (1.0 / parts).sum(axis=0), 0.0)
        else:
            agg = parts.mean(axis=0)
    n = counts.sum(axis=-1)
    # H = 0 when nothing was answered at L >= tau_high (R is undefined there),
    # and when R, Cov or D is 0 (the harmonic mean's limit; the others give 0 too).
    out: FloatArray = np.where(answered_hi > 0, 100.0 * agg, np.where(n > 0, 0.0, np.nan))
    return out


SAFETY_VARIANTS: dict[str, VariantFn] = {"1.0": safety_v1}
HANDOVER_VARIANTS: dict[str, VariantFn] = {
    "v2": handover_v2,
    "v1": handover_v1,
    "1.0": handover_v1,  # v1's name before SCORING.md named two variants
}
# the names of H v1, whose D counts every not-correct case, and its own default mean
V1_NAMES: Final = frozenset({"v1", "1.0"})
H_DEFAULT_VARIANT: Final = "v2"


def default_h_aggregate(h_variant: str) -> str:
    """How ``h_variant`` combines R, Cov and D unless told: geometric for v1, else harmonic."""
    return "geometric" if h_variant in V1_NAMES else "harmonic"


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
