"""Secondary figures, hand-derived on the worked example, and rho against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scoring import (
    aurc,
    brier_score,
    expected_calibration_error,
    likert_accuracy,
    risk_coverage,
    secondary_metrics,
    spearman_rho,
)
from scoring.categories import CORRECT_0, IDK, N_CATEGORIES, WRONG_0


def worked() -> np.ndarray:
    # SCORING.md 7: correct L4, wrong L3, idk, correct L0, wrong L1.
    vec = np.zeros(N_CATEGORIES)
    vec[[CORRECT_0 + 4, WRONG_0 + 3, IDK, CORRECT_0 + 0, WRONG_0 + 1]] = 1
    return vec


def test_profile_and_rates() -> None:
    m = secondary_metrics(worked())
    assert (m["n_correct"], m["n_wrong"], m["n_idk"], m["n_answered"]) == (2, 2, 1, 4)
    assert m["n_correct_l4"] == 1 and m["n_wrong_l3"] == 1 and m["n_wrong_l4"] == 0
    assert m["idk_rate"] == pytest.approx(0.2)  # 1 of 5
    assert m["confident_error_rate"] == 0.0  # no wrong answer at L4
    assert m["likert4_accuracy"] == 1.0


def test_likert_accuracy() -> None:
    # L0: 1/1, L1: 0/1, L2: unused, L3: 0/1, L4: 1/1
    acc = likert_accuracy(worked())
    np.testing.assert_array_equal(acc, [1.0, 0.0, np.nan, 0.0, 1.0])


def test_brier_and_ece() -> None:
    # Brier over 4 answered rows with p = L/4:
    # (1 - 1)^2 + (0.75 - 0)^2 + (0 - 1)^2 + (0.25 - 0)^2 = 0 + .5625 + 1 + .0625 = 1.625 -> /4
    assert brier_score(worked()) == pytest.approx(1.625 / 4)
    # ECE = 1/4 * (|1 - 0| + |0 - .25| + |0 - .75| + |1 - 1|) = 2 / 4
    assert expected_calibration_error(worked()) == pytest.approx(0.5)


def test_spearman_worked_example_is_zero() -> None:
    # Likert ranks [4, 3, 1, 2] vs correctness [1, 0, 1, 0]: deviations of the ranks
    # (1.5, .5, -1.5, -.5) times (+, -, +, -) sum to 0, so rho = 0.
    assert spearman_rho(worked()) == pytest.approx(0.0, abs=1e-12)


def test_spearman_perfect_and_degenerate() -> None:
    vec = np.zeros(N_CATEGORIES)
    vec[CORRECT_0 + 4] = 3  # all correct at L4, all wrong at L0: rho = 1
    vec[WRONG_0 + 0] = 2
    assert spearman_rho(vec) == pytest.approx(1.0)
    one_level = np.zeros(N_CATEGORIES)
    one_level[[CORRECT_0 + 2, WRONG_0 + 2]] = 1  # Likert constant -> undefined
    assert math.isnan(spearman_rho(one_level))
    assert math.isnan(spearman_rho(np.zeros(N_CATEGORIES)))


def test_spearman_matches_scipy_on_random_tables() -> None:
    rng = np.random.default_rng(3)
    for _ in range(25):
        likert = rng.integers(0, 5, size=int(rng.integers(3, 40)))
        correct = rng.integers(0, 2, size=likert.size)
        vec = np.zeros(N_CATEGORIES)
        np.add.at(vec, np.where(correct == 1, CORRECT_0, WRONG_0) + likert, 1)
        expected = stats.spearmanr(likert, correct).statistic
        got = spearman_rho(vec)
        if np.isnan(expected):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-10)


def test_risk_coverage_and_aurc() -> None:
    # N = 5. Thresholds 4..0 (answered at or above / N; wrong / answered):
    # t=4: {c4} 1/5, 0;  t=3: {c4,w3} 2/5, 1/2;  t=2: same;  t=1: +w1 3/5, 2/3;
    # t=0: +c0 4/5, 2/4.
    coverage, risk = risk_coverage(worked())
    np.testing.assert_allclose(coverage, [0.2, 0.4, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(risk, [0.0, 0.5, 0.5, 2 / 3, 0.5])
    # Step area: .2*0 + .2*.5 + 0*.5 + .2*(2/3) + .2*.5 = 1/3
    assert aurc(worked()) == pytest.approx(1 / 3)


def test_aurc_single_level_and_nothing_answered() -> None:
    vec = np.zeros(N_CATEGORIES)
    vec[WRONG_0 + 4] = 3  # everything wrong at L4: one step of width 1 at risk 1
    assert aurc(vec) == pytest.approx(1.0)
    idk_only = np.zeros(N_CATEGORIES)
    idk_only[IDK] = 2
    assert math.isnan(aurc(idk_only))
