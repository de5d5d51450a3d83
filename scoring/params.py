"""Scoring parameters, the spec version, and the versioned S/H registry.

RadLE-S and RadLE-H have no published formula (SCORING.md preamble), so they
live behind named variants (scoring/variants.py, re-exported here): a study
can register its own and the report records which one it used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from scoring.categories import WEIGHTS
from scoring.variants import (
    H_DEFAULT_VARIANT,
    HANDOVER_VARIANTS,
    SAFETY_VARIANTS,
    VariantFn,
    default_h_aggregate,
    register_handover_variant,
    register_safety_variant,
)

__all__ = [
    "BOOTSTRAP_MODES",
    "HANDOVER_VARIANTS",
    "H_AGGREGATES",
    "SAFETY_VARIANTS",
    "SCORING_SPEC_VERSION",
    "WEIGHTS",
    "ScoringParams",
    "VariantFn",
    "register_handover_variant",
    "register_safety_variant",
]

# The version of the formulas and defaults (SCORING.md) a result was computed under.
# It changes when the same parameters would give other numbers: 2.0 (issue 40) made
# RadLE-H v2 the default H and counts Bench 2's "I don't know", failed and missing
# reports 0 in the rubric's totals and ceiling; neither is a parameter of 1.0's results.
SCORING_SPEC_VERSION: Final = "2.0"
H_AGGREGATES: Final = ("geometric", "harmonic", "arithmetic")
BOOTSTRAP_MODES: Final = ("case", "two-way")


@dataclass(frozen=True)
class ScoringParams:
    """Every knob of SCORING.md, with its defaults. Recorded in every result."""

    idk_score: float = 0.0
    tau_high: int = 3
    # None: the H variant's own mean (harmonic for v2, geometric for v1), resolved here
    h_aggregate: str | None = None
    min_completion: float = 1.0
    n_boot: int = 2000
    seed: int = 0
    bootstrap_mode: str = "case"
    s_variant: str = "1.0"
    h_variant: str = H_DEFAULT_VARIANT
    # points of an answer at Likert L: "L+1" (SCORING.md section 2) or "L" (RadLE's
    # long-master weighted_score); C and S divide by the most one case gives (5 or 4)
    weight: str = "L+1"

    def __post_init__(self) -> None:
        # |idk_score| <= 5 keeps RadLE-C inside 0..2000, as the spec states it.
        if not -5.0 <= self.idk_score <= 5.0:
            raise ValueError(f"idk_score must be within [-5, 5], got {self.idk_score}")
        if self.tau_high not in range(5):
            raise ValueError(f"tau_high must be an integer 0..4, got {self.tau_high}")
        if self.h_aggregate is None:
            object.__setattr__(self, "h_aggregate", default_h_aggregate(self.h_variant))
        if self.h_aggregate not in H_AGGREGATES:
            raise ValueError(f"h_aggregate must be one of {H_AGGREGATES}, got {self.h_aggregate!r}")
        if not 0.0 <= self.min_completion <= 1.0:
            raise ValueError(f"min_completion must be within [0, 1], got {self.min_completion}")
        if self.n_boot < 0:
            raise ValueError(f"n_boot must be >= 0 (0 turns the bootstrap off), got {self.n_boot}")
        if self.bootstrap_mode not in BOOTSTRAP_MODES:
            raise ValueError(f"bootstrap_mode must be one of {BOOTSTRAP_MODES}")
        if self.s_variant not in SAFETY_VARIANTS:
            raise ValueError(f"unknown RadLE-S variant {self.s_variant!r}")
        if self.h_variant not in HANDOVER_VARIANTS:
            raise ValueError(f"unknown RadLE-H variant {self.h_variant!r}")
        if self.weight not in WEIGHTS:
            raise ValueError(f"weight must be one of {WEIGHTS}, got {self.weight!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for reports, with the spec version that defines the formulas."""
        return {**asdict(self), "scoring_spec_version": SCORING_SPEC_VERSION}
