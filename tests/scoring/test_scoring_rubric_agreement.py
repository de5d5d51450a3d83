"""ICC(2,1), weighted kappa and the 0-40 histogram, against hand-derived and published values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from scoring.rubric_agreement import icc_2_1, score_histogram, tier_kappa, weighted_kappa


def test_icc_by_hand() -> None:
    # grand mean 3.5; rows 1.5, 3.5, 5.5 -> SSR = 2 * 8 = 16, MSR = 8; columns 3, 4 ->
    # SSC = 3 * 0.5 = 1.5, MSC = 1.5; SST = 17.5 -> SSE = 0. ICC = 8 / (8 + 2 * 1.5 / 3) = 8/9
    assert icc_2_1([[1, 2], [3, 4], [5, 6]]) == pytest.approx(8 / 9)


def test_icc_shrout_fleiss_1979() -> None:
    # Shrout and Fleiss (1979), table 2: 6 targets, 4 judges; ICC(2,1) = 0.29
    data = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    assert icc_2_1(data) == pytest.approx(0.29, abs=0.005)


def test_icc_leaves_out_incomplete_rows_and_is_nan_without_two() -> None:
    nan = float("nan")
    assert icc_2_1([[1, 2], [3, 4], [5, 6], [7, nan]]) == pytest.approx(8 / 9)
    assert math.isnan(icc_2_1([[1, 2], [3, nan]]))
    assert math.isnan(icc_2_1([[5, 5], [5, 5]]))  # no variance at all


def test_weighted_kappa_by_hand() -> None:
    # O: (0,0), (1,2), (2,2) a third each; w = ((i-j)/2)^2. sum wO = 0.25/3.
    # rows 1/3 each, columns (1/3, 0, 2/3): sum wE = (2/3 + 0.25 + 1/3) / 3 = 1.25/3
    assert weighted_kappa([0, 1, 2], [0, 2, 2], [0, 1, 2]) == pytest.approx(0.8)
    # linear: w = |i-j|/2: sum wO = 0.5/3; sum wE = (2/3 + 1/3*0.5 + 2/3*0.5 + 1/3) / 3 = 1.5/3
    assert weighted_kappa([0, 1, 2], [0, 2, 2], [0, 1, 2], "linear") == pytest.approx(2 / 3)
    assert weighted_kappa(["a", "b"], ["a", "b"], ["a", "b"]) == 1.0
    assert weighted_kappa([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="outside"):
        weighted_kappa([0, 3], [0, 1], [0, 1, 2])


def test_tier_kappa_orders_the_tiers() -> None:
    # 39 and 33 are Exceptional and Strong, adjacent tiers; 39 and 2 are five apart
    assert tier_kappa([39, 20, 2], [39, 20, 2]) == 1.0
    near = tier_kappa([39, 20, 2], [33, 20, 2])
    far = tier_kappa([39, 20, 2], [2, 20, 39])
    assert near > far


def test_histogram_has_every_score_for_every_responder() -> None:
    frame = pd.DataFrame({"responder": ["A", "A", "B"], "rubric": [40, 40, 0]})
    hist = score_histogram(frame)
    assert len(hist) == 2 * 41
    a = hist[hist["responder"] == "A"].set_index("score")
    assert a.loc[40, "count"] == 2 and a["count"].sum() == 2 and a.loc[40, "tier"] == "exceptional"
    b = hist[hist["responder"] == "B"].set_index("score")
    assert b.loc[0, "count"] == 1 and b.loc[0, "tier"] == "fail"
