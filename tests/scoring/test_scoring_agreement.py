"""Fleiss and Cohen kappa on textbook tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring import cohen_kappa, fleiss_kappa, outcome_table
from scoring.categories import CORRECT_0, FAILURE, IDK, MISSING, WRONG_0

# Fleiss (1971) as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories.
# P-bar = 0.378, P_e = 0.2128 -> kappa = (0.378 - 0.2128) / (1 - 0.2128) = 0.2099
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_textbook_example() -> None:
    assert fleiss_kappa(FLEISS_TABLE) == pytest.approx(0.20993, abs=5e-5)


def test_fleiss_perfect_and_degenerate() -> None:
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)
    # Everyone always picks category 0: P_e = 1, kappa undefined.
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))
    # No case with two ratings.
    assert math.isnan(fleiss_kappa([[1, 0], [0, 1]]))


def test_fleiss_variable_raters() -> None:
    # Case 1: 2 raters agree (P_1 = 1); case 2: 3 raters split 2/1 (P_2 = (4+1-3)/6 = 1/3).
    # p = (4/5, 1/5): P_e = 0.68; P-bar = 2/3 -> kappa = (2/3 - .68) / .32 = -0.041666...
    assert fleiss_kappa([[2, 0], [2, 1]]) == pytest.approx((2 / 3 - 0.68) / 0.32)


def test_outcome_table_counts_correct_wrong_idk_only() -> None:
    cats = np.array(
        [[CORRECT_0 + 4, WRONG_0 + 2, IDK], [CORRECT_0 + 0, FAILURE, MISSING]], dtype=np.int8
    )
    np.testing.assert_array_equal(outcome_table(cats), [[2, 0, 0], [0, 1, 0], [0, 0, 1]])


def test_cohen_textbook_example() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = .7; p_e = .5*.6 + .5*.4 = .5 -> kappa = .2 / .5 = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_edges() -> None:
    assert cohen_kappa(["c", "w", "c"], ["c", "w", "c"]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["c", "c"], ["c", "c"]))  # p_e = 1
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError):
        cohen_kappa(["c"], ["c", "w"])
    # perfect disagreement with balanced labels: p_o = 0, p_e = 1/2 -> -1
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
