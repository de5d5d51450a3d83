"""Sign-flip permutation test, hand-derived cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring import sign_flip_test


def test_all_zero_differences_give_p_one() -> None:
    # T = 0 and every |T*| = 0 >= 0: p = (1 + B) / (B + 1) = 1
    assert sign_flip_test(np.zeros(6), 99) == pytest.approx(1.0)


def test_single_case_gives_p_one() -> None:
    # One case: |T*| = |d| = |T| whatever the sign.
    assert sign_flip_test(np.array([3.0]), 50) == pytest.approx(1.0)


def test_consistent_gains_give_small_p() -> None:
    # Ten cases each +1: |T*| = 10 only when all signs agree, 2 of 1024 patterns,
    # so p ~ (1 + B * 2/1024) / (B + 1) ~ 0.0029 with B = 2000.
    p = sign_flip_test(np.ones(10), 2000, seed=0)
    assert p < 0.01


def test_three_cases_matches_exact_enumeration() -> None:
    # d = (1, 1, 1): |T*| = 3 for 2 of 8 sign patterns -> p -> 0.25 as B grows.
    p = sign_flip_test(np.ones(3), 20000, seed=1)
    assert p == pytest.approx(0.25, abs=0.015)


def test_columns_share_sign_flips() -> None:
    d = np.random.default_rng(0).normal(size=(12, 3))
    together = sign_flip_test(d, 300, seed=7)
    apart = [sign_flip_test(d[:, j], 300, seed=7) for j in range(3)]
    np.testing.assert_allclose(together, apart)


def test_no_permutations_or_cases_is_nan() -> None:
    assert math.isnan(float(sign_flip_test(np.ones(4), 0)))
    assert math.isnan(float(sign_flip_test(np.zeros(0), 10)))
