"""Per-case points (SCORING.md section 2) and the responder x case matrix."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scoring import build_matrix, category_points, row_points, validate_frame
from scoring.categories import CORRECT_0, IDK, MISSING, WRONG_0


def test_points_table() -> None:
    # +(L+1) correct, -(L+1) wrong, idk_score for idk, 0 otherwise
    table = category_points(1.0)
    assert list(table[CORRECT_0 : CORRECT_0 + 5]) == [1, 2, 3, 4, 5]
    assert list(table[WRONG_0 : WRONG_0 + 5]) == [-1, -2, -3, -4, -5]
    assert table[IDK] == 1.0 and table[MISSING] == 0.0


def test_row_points_worked_example(worked_rows: list) -> None:
    # s = +5, -4, 0, +1, -2 (SCORING.md section 7)
    points = row_points(validate_frame(worked_rows))
    np.testing.assert_array_equal(points, [5, -4, 0, 1, -2])


def test_failure_and_invalid_score_zero(make_rows: Callable) -> None:
    rows = make_rows("m", [("failure", None), ("invalid", None)])
    np.testing.assert_array_equal(row_points(validate_frame(rows), idk_score=1.0), [0, 0])


def test_matrix_union_of_cases_and_missing(make_cell: Callable) -> None:
    rows = [make_cell("b", 2, "correct", 4), make_cell("a", 1, "idk")]
    m = build_matrix(validate_frame(rows))
    assert m.responders == ("a", "b") and m.case_ids == ("1", "2")
    assert m.categories.tolist() == [[IDK, MISSING], [MISSING, CORRECT_0 + 4]]
    np.testing.assert_array_equal(m.completion(), [0.5, 0.5])


def test_explicit_case_list_adds_missing_and_drops_others(make_cell: Callable) -> None:
    rows = [make_cell("a", 1, "correct", 4), make_cell("a", 9, "wrong", 4)]
    m = build_matrix(validate_frame(rows), case_ids=["1", "2", "3"])
    assert m.case_ids == ("1", "2", "3")
    counts = m.counts()[0]
    assert counts[CORRECT_0 + 4] == 1 and counts[MISSING] == 2 and counts.sum() == 3
    # a responder whose rows are all off the list: every case missing
    only = build_matrix(validate_frame(rows), case_ids=["5", "6"])
    assert only.counts()[0][MISSING] == 2


def test_empty_frame_matrix() -> None:
    m = build_matrix(validate_frame([]))
    assert m.categories.shape == (0, 0) and m.counts().shape == (0, 14)
