"""The point weight parameter (``weight``: ``L+1`` of SCORING.md, or RadLE's ``L``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import ScoringParams, row_points, score_responses, validate_frame
from scoring.io import read_radle_csv
from tests.scoring.conftest import Row, cell, responder_rows
from tests.scoring.test_scoring_properties import FAST, studies

SAMPLE = Path(__file__).parent / "io" / "data" / "radle_long_master_sample.csv"
NO_BOOT = {"n_boot": 0}


def _only(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in report["responders"] if r["responder"] == name)


def test_the_worked_example_under_weight_l(worked_rows: list[Row]) -> None:
    # SCORING.md section 7 with s = +-L: +4, -3, 0 (idk), 0 (correct L0), -1 -> sum 0.
    frame = validate_frame(worked_rows)
    assert row_points(frame, weight="L").tolist() == [4.0, -3.0, 0.0, 0.0, -1.0]
    assert row_points(frame).tolist() == [5.0, -4.0, 0.0, 1.0, -2.0]  # the default, L+1
    row = _only(score_responses(worked_rows, ScoringParams(weight="L", **NO_BOOT)), "model-x")
    # C = 1000 * (1 + 0 / (4 * 5)) = 1000; E = 3 + 1 = 4, S = 100 * (1 - 4 / 20) = 80
    assert row["radle_c"] == pytest.approx(1000.0)
    assert row["radle_s"] == pytest.approx(80.0)
    # A, R and H do not depend on the weight: A = 0.4, R = 0.5, H = 46.15 (section 7)
    assert row["radle_a"] == pytest.approx(0.4)
    assert row["radle_h"] == pytest.approx(46.154, abs=1e-3)


def test_c_keeps_its_anchors_under_both_weights() -> None:
    best = responder_rows("m", [("correct", 4)] * 3)
    worst = responder_rows("m", [("wrong", 4)] * 3)
    for weight in ("L+1", "L"):
        params = ScoringParams(weight=weight, **NO_BOOT)
        assert _only(score_responses(best, params), "m")["radle_c"] == pytest.approx(2000.0)
        assert _only(score_responses(worst, params), "m")["radle_c"] == pytest.approx(0.0)
        assert _only(score_responses(worst, params), "m")["radle_s"] == pytest.approx(0.0)


def test_a_correct_l2_scores_1500_under_l_and_1600_under_l_plus_1() -> None:
    rows = responder_rows("m", [("correct", 2)])
    # L: 1000 * (1 + 2 / 4) = 1500; L+1: 1000 * (1 + 3 / 5) = 1600
    assert _only(score_responses(rows, ScoringParams(weight="L", **NO_BOOT)), "m")[
        "radle_c"
    ] == pytest.approx(1500.0)
    assert _only(score_responses(rows, ScoringParams(**NO_BOOT)), "m")["radle_c"] == (
        pytest.approx(1600.0)
    )


def test_the_weight_is_recorded_and_checked() -> None:
    assert ScoringParams().to_dict()["weight"] == "L+1"
    assert ScoringParams(weight="L").to_dict()["weight"] == "L"
    with pytest.raises(ValueError, match="weight must be one of"):
        ScoringParams(weight="L+2")


def test_row_points_with_weight_l_reproduce_radles_weighted_score() -> None:
    raw = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    frame = validate_frame(read_radle_csv(SAMPLE, include_excluded=True))
    points = row_points(frame, weight="L")
    answered = (frame["status"] == "answered").to_numpy()
    assert answered.sum() == 8  # nine rows, one "I don't know"
    expected = raw["weighted_score"].to_numpy()
    for i in np.flatnonzero(answered):
        assert points[i] == float(expected[i]), (frame["responder"][i], expected[i])


@FAST
@given(studies(), st.floats(-4, 4))
def test_l_points_are_l_plus_1_points_less_one_per_answer(rows: list[Row], idk: float) -> None:
    """s_L = s_{L+1} - 1 on a correct answer, + 1 on a wrong one, equal otherwise."""
    frame = validate_frame(rows)
    plus = row_points(frame, idk, "L+1")
    bare = row_points(frame, idk, "L")
    answered = (frame["status"] == "answered").to_numpy()
    sign = np.where(frame["correct"].fillna(0).to_numpy(dtype=int) == 1, 1.0, -1.0)
    assert np.allclose(bare, plus - np.where(answered, sign, 0.0))
    report = score_responses(rows, ScoringParams(weight="L", idk_score=idk, n_boot=0))
    for row in report["responders"]:  # |idk points| <= 4 = the most a case gives under L
        assert math.isnan(row["radle_c"]) or -1e-9 <= row["radle_c"] <= 2000 + 1e-9
        assert math.isnan(row["radle_s"]) or -1e-9 <= row["radle_s"] <= 100 + 1e-9


def test_cells_with_cohorts_give_a_cohort_field_and_pools() -> None:
    rows = [
        {**cell("a", 1, "correct", 4), "cohort": "open"},  # +5
        {**cell("a", 2, "wrong", 0), "cohort": "open"},  # -1
        {**cell("b", 1, "idk"), "cohort": "open"},  # 0
        {**cell("b", 2, "correct", 2), "cohort": "open"},  # +3
        {**cell("c", 1, "correct", 1), "cohort": "closed"},  # +2
        {**cell("c", 2, "correct", 1), "cohort": "closed"},  # +2
        cell("h", 1, "correct", 3, kind="human"),
        cell("h", 2, "correct", 3, kind="human"),
    ]
    report = score_responses(rows, ScoringParams(**NO_BOOT))
    assert [(r["responder"], r["cohort"]) for r in report["responders"]] == [
        ("a", "open"),
        ("b", "open"),
        ("c", "closed"),
        ("h", None),
    ]
    pools = {p["cohort"]: p for p in report["cohort_pools"]}
    assert sorted(pools) == ["closed", "open"]
    open_ = pools["open"]
    assert (open_["responder"], open_["kind"], open_["runs"]) == (
        "cohort_pool",
        "cohort",
        ["a", "b"],
    )
    # per case the two runs weigh 1/2: case 1 (5 + 0) / 2 = 2.5, case 2 (-1 + 3) / 2 = 1
    # C = 1000 * (1 + 3.5 / (5 * 2)) = 1350; A = (1/2 + 1/2) / 2 = 0.5
    assert open_["radle_c"] == pytest.approx(1350.0)
    assert open_["radle_a"] == pytest.approx(0.5)
    assert pools["closed"]["radle_c"] == pytest.approx(1400.0)  # one run: 1000 * (1 + 4/10)
    assert report["human_pool"]["n_readers"] == 1  # humans never enter a cohort pool


def test_cohort_pools_get_bootstrap_cis() -> None:
    rows = [{**cell(r, c, "correct", 4), "cohort": "x"} for r in ("a", "b") for c in (1, 2)]
    pool = score_responses(rows, ScoringParams(n_boot=20))["cohort_pools"][0]
    assert pool["radle_c_ci_low"] == pytest.approx(2000.0)
    assert pool["radle_c_ci_high"] == pytest.approx(2000.0)


def test_no_cohort_column_no_cohort_pools(worked_rows: list[Row]) -> None:
    report = score_responses(worked_rows, ScoringParams(**NO_BOOT))
    assert "cohort_pools" not in report
    assert report["responders"][0]["cohort"] is None


def test_a_responder_with_two_cohorts_is_refused() -> None:
    rows = [{**cell("a", 1, "correct", 4), "cohort": "x"}, {**cell("a", 2, "idk"), "cohort": "y"}]
    with pytest.raises(ValueError, match="more than one cohort"):
        score_responses(rows, ScoringParams(**NO_BOOT))
