"""The fourteen outcome categories every scoring function counts.

One (responder, case) cell falls in exactly one category. A responder is then
summarised by a count vector of length ``N_CATEGORIES`` (weighted, for the
pool), and every metric of SCORING.md sections 3-4 is a function of that
vector. This is what lets the bootstrap work on count arrays of any shape.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

N_LEVELS: Final = 5  # Likert 0..4
LEVELS: Final = np.arange(N_LEVELS)

# Layout of a count vector.
CORRECT_0: Final = 0  # correct at Likert L is CORRECT_0 + L   (0..4)
WRONG_0: Final = 5  # wrong at Likert L is WRONG_0 + L        (5..9)
IDK: Final = 10
INVALID: Final = 11
FAILURE: Final = 12
MISSING: Final = 13
N_CATEGORIES: Final = 14

CORRECT: Final = slice(CORRECT_0, CORRECT_0 + N_LEVELS)
WRONG: Final = slice(WRONG_0, WRONG_0 + N_LEVELS)

STATUSES: Final = ("answered", "idk", "invalid", "failure", "missing")

CATEGORY_NAMES: Final = (
    *(f"correct_l{level}" for level in range(N_LEVELS)),
    *(f"wrong_l{level}" for level in range(N_LEVELS)),
    "idk",
    "invalid",
    "failure",
    "missing",
)


# The point weight of an answer at Likert L (scoring parameter ``weight``):
# ``L+1`` is SCORING.md section 2; ``L`` is the weight of RadLE's published
# long-master ``weighted_score`` column (a correct L4 is 4.0, a wrong L3 -3.0).
WEIGHTS: Final = ("L+1", "L")


def level_weights(weight: str = "L+1") -> FloatArray:
    """The points of a correct answer at each Likert level 0..4 under ``weight``."""
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {WEIGHTS}, got {weight!r}")
    out: FloatArray = LEVELS.astype(np.float64) + (1.0 if weight == "L+1" else 0.0)
    return out


def max_points(weight: str = "L+1") -> float:
    """The most points one case can give (a correct L4): the 5 of 5N in SCORING.md."""
    return float(level_weights(weight)[-1])


def category_points(idk_score: float, weight: str = "L+1") -> FloatArray:
    """Points s of SCORING.md section 2 for each category, as a lookup table."""
    weights = level_weights(weight)
    table = np.zeros(N_CATEGORIES)
    table[CORRECT] = weights
    table[WRONG] = -weights
    table[IDK] = idk_score
    return table


def high_counts(counts: FloatArray, tau_high: int) -> tuple[FloatArray, FloatArray]:
    """(correct, wrong) answered at Likert >= tau_high, shape (...)."""
    c_hi = counts[..., CORRECT_0 + tau_high : CORRECT_0 + N_LEVELS].sum(axis=-1)
    w_hi = counts[..., WRONG_0 + tau_high : WRONG_0 + N_LEVELS].sum(axis=-1)
    return c_hi, w_hi
