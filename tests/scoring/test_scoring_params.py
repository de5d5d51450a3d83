"""ScoringParams defaults, validation, and the versioned S/H registry."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import (
    SCORING_SPEC_VERSION,
    ScoringParams,
    radle_metrics,
    register_handover_variant,
    register_safety_variant,
)
from scoring.categories import CORRECT_0, N_CATEGORIES, WRONG_0, FloatArray


def test_defaults_and_record() -> None:
    p = ScoringParams()
    assert (p.idk_score, p.tau_high, p.h_aggregate, p.min_completion, p.n_boot, p.seed) == (
        0.0,
        3,
        "harmonic",  # RadLE-H v2's own mean (SCORING.md section 3)
        1.0,
        2000,
        0,
    )
    record = p.to_dict()
    assert record["scoring_spec_version"] == SCORING_SPEC_VERSION == "2.0"
    assert record["s_variant"] == "1.0" and record["h_variant"] == "v2"
    assert record["h_aggregate"] == "harmonic"


def test_h_variant_brings_its_own_mean_unless_told() -> None:
    # v1 (and its old name 1.0) is the geometric mean unless h_aggregate says otherwise;
    # the resolved mean is what every result records.
    assert ScoringParams(h_variant="v1").to_dict()["h_aggregate"] == "geometric"
    assert ScoringParams(h_variant="1.0").h_aggregate == "geometric"
    assert ScoringParams(h_variant="v1", h_aggregate="harmonic").h_aggregate == "harmonic"
    assert ScoringParams(h_variant="v2", h_aggregate="geometric").h_aggregate == "geometric"
    # a recorded params dict rebuilds the same params
    record = ScoringParams(h_variant="v1").to_dict()
    del record["scoring_spec_version"]
    assert ScoringParams(**record) == ScoringParams(h_variant="v1")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"idk_score": 6},
        {"tau_high": 5},
        {"h_aggregate": "median"},
        {"min_completion": 1.5},
        {"n_boot": -1},
        {"bootstrap_mode": "readers"},
        {"s_variant": "9.9"},
        {"h_variant": "9.9"},
    ],
)
def test_rejects_bad_values(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        ScoringParams(**kwargs)


def _half_penalty(counts: FloatArray, params: ScoringParams) -> FloatArray:
    # A study variant: wrong answers cost half. E/2 over 5N.
    n = counts.sum(axis=-1)
    e = (counts[..., WRONG_0 : WRONG_0 + 5] * np.arange(1, 6)).sum(axis=-1)
    out: FloatArray = 100.0 * (1.0 - 0.5 * e / (5.0 * n))
    return out


def _always_42(counts: FloatArray, params: ScoringParams) -> FloatArray:
    return np.full(counts.shape[:-1], 42.0)


def test_registered_variants_are_used_and_recorded() -> None:
    register_safety_variant("test-half", _half_penalty)
    register_handover_variant("test-42", _always_42)
    counts = np.zeros(N_CATEGORIES)
    counts[[CORRECT_0 + 4, WRONG_0 + 4]] = 1  # E = 5, N = 2
    params = ScoringParams(s_variant="test-half", h_variant="test-42")
    m = radle_metrics(counts, params)
    assert m["radle_s"] == pytest.approx(100 * (1 - 0.5 * 5 / 10))  # 75 (variant 1.0: 50)
    assert m["radle_h"] == 42.0
    assert params.to_dict()["s_variant"] == "test-half"


def test_registering_a_different_function_under_a_taken_name_fails() -> None:
    with pytest.raises(ValueError):
        register_safety_variant("1.0", _half_penalty)
