"""The pooled human baseline, SCORING.md section 4, on hand-built studies."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from scoring import ScoringParams, score_responses


def test_complete_coverage_pool_is_mean_of_readers(make_rows: Callable) -> None:
    # r1 all correct at L4 on 2 cases (C = 2000), r2 all wrong at L4 (C = 0): pool 1000.
    rows = make_rows("r1", [("correct", 4)] * 2, kind="human") + make_rows(
        "r2", [("wrong", 4)] * 2, kind="human"
    )
    pool = score_responses(rows, ScoringParams(n_boot=0))["human_pool"]
    assert pool["radle_c"] == pytest.approx(1000.0)
    assert pool["radle_a"] == pytest.approx(0.5)
    # Weighted counts per case: 1/2 correct + 1/2 wrong, both at L4 -> R = 1 / (1 + 1)
    assert pool["radle_r"] == pytest.approx(0.5)
    assert pool["n_readers"] == 2 and pool["readers"] == ["r1", "r2"]


def test_incomplete_reader_weights_by_case(make_rows: Callable, make_cell: Callable) -> None:
    # 3 cases; r1 reads all (correct L4), r2 reads case 1 only (wrong L4).
    rows = make_rows("r1", [("correct", 4)] * 3, kind="human")
    rows.append(make_cell("r2", 1, "wrong", 4, kind="human"))
    strict = score_responses(rows, ScoringParams(n_boot=0))["human_pool"]
    assert strict["readers"] == ["r1"] and strict["excluded_readers"] == ["r2"]
    assert strict["radle_c"] == pytest.approx(2000.0)
    # min_completion 0.3 lets r2 in: n = (2, 1, 1); s = (0, 5, 5); sum 10
    # C = 1000 (1 + 10 / 15) = 1666.67 (the mean of reader indices would be 1333.3)
    loose = score_responses(rows, ScoringParams(n_boot=0, min_completion=0.3))["human_pool"]
    assert loose["radle_c"] == pytest.approx(1000 * (1 + 10 / 15))
    # Weighted correct = 1/2 + 1 + 1 = 2.5 of N = 3
    assert loose["radle_a"] == pytest.approx(2.5 / 3)
    assert loose["n_wrong_l4"] == pytest.approx(0.5)


def test_case_nobody_read_is_missing_in_pool(make_cell: Callable) -> None:
    # Cases 1, 2; the only reader (completion 0.5) read case 1 correct at L4; a model
    # read case 2 so it is in the case set. Pool: s = (5, 0) -> C = 1000 (1 + 5/10).
    rows = [make_cell("r1", 1, "correct", 4, kind="human"), make_cell("m", 2, "idk")]
    pool = score_responses(rows, ScoringParams(n_boot=0, min_completion=0.5))["human_pool"]
    assert pool["radle_c"] == pytest.approx(1500.0)
    assert pool["n_missing"] == pytest.approx(1.0)


def test_group_pools(make_rows: Callable) -> None:
    rows = (
        make_rows("a1", [("correct", 4)] * 2, kind="human", group="PGY2")
        + make_rows("a2", [("wrong", 4)] * 2, kind="human", group="PGY2")
        + make_rows("b1", [("correct", 3)] * 2, kind="human", group="board")
    )
    pool = score_responses(rows, ScoringParams(n_boot=0))["human_pool"]
    # overall: per case s = (5 - 5 + 4) / 3 = 4/3 -> C = 1000 (1 + (8/3) / 10)
    assert pool["radle_c"] == pytest.approx(1000 * (1 + (8 / 3) / 10))
    by_group = {g["group"]: g for g in pool["by_group"]}
    assert by_group["PGY2"]["radle_c"] == pytest.approx(1000.0)  # (2000 + 0) / 2
    assert by_group["board"]["radle_c"] == pytest.approx(1800.0)  # 1000 (1 + 4/5)
    assert by_group["board"]["readers"] == ["b1"]


def test_models_never_enter_the_pool(make_rows: Callable) -> None:
    rows = make_rows("m", [("correct", 4)] * 2)
    pool = score_responses(rows, ScoringParams(n_boot=0))["human_pool"]
    assert pool["n_readers"] == 0
    assert math.isnan(pool["radle_c"]) and math.isnan(pool["fleiss_kappa"])


def test_fleiss_kappa_reported_for_pool(make_rows: Callable) -> None:
    # Two readers agree on both cases (correct, then wrong): P_i = 1 for each case;
    # p_j = (1/2, 1/2, 0) -> P_e = 1/2; kappa = (1 - 1/2) / (1 - 1/2) = 1
    rows = make_rows("r1", [("correct", 4), ("wrong", 2)], kind="human") + make_rows(
        "r2", [("correct", 1), ("wrong", 0)], kind="human"
    )
    pool = score_responses(rows, ScoringParams(n_boot=0))["human_pool"]
    assert pool["fleiss_kappa"] == pytest.approx(1.0)
