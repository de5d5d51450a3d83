"""Bench 2 rubric summary (SCORING.md section 6)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from scoring import FrameError, rubric_summary, rubric_tier


def test_summary_hand_derived() -> None:
    frame = pd.DataFrame({"responder": ["a"] * 5 + ["b"], "rubric": [40, 35, 24, 10, 0, 31]})
    out = rubric_summary(frame).set_index("responder")
    a = out.loc["a"]
    # total 109 of 40*5 = 200 -> 54.5 %; mean 21.8; median 24; range 0..40
    assert (a["total"], a["ceiling"], a["percent_of_ceiling"]) == (109, 200, 54.5)
    assert a["mean"] == pytest.approx(21.8) and a["median"] == 24
    # squares of deviations from 21.8: 331.24 + 174.24 + 4.84 + 139.24 + 475.24 = 1124.8
    # sample SD = sqrt(1124.8 / 4) = 16.769
    assert a["sd"] == pytest.approx((1124.8 / 4) ** 0.5)
    assert (a["min"], a["max"]) == (0, 40)
    tiers = [a[f"n_{t}"] for t in ("exceptional", "strong", "solid", "mixed", "poor", "fail")]
    assert tiers == [1, 1, 1, 0, 1, 1]
    b = out.loc["b"]
    assert b["n_solid"] == 1 and math.isnan(b["sd"])  # one case: no sample SD


@pytest.mark.parametrize(
    ("score", "tier"),
    [(40, "exceptional"), (38, "exceptional"), (37, "strong"), (32, "strong"), (31, "solid"),
     (24, "solid"), (23, "mixed"), (16, "mixed"), (15, "poor"), (8, "poor"), (7, "fail"),
     (0, "fail")],
)  # fmt: skip
def test_tier_boundaries(score: int, tier: str) -> None:
    assert rubric_tier(score) == tier


def test_rejects_out_of_range_and_fractions() -> None:
    for bad in (41, -1, 2.5, "x"):
        with pytest.raises(FrameError):
            rubric_summary(pd.DataFrame({"responder": ["a"], "rubric": [bad]}))
    with pytest.raises(ValueError):
        rubric_tier(41)


def test_empty() -> None:
    assert len(rubric_summary(pd.DataFrame({"responder": [], "rubric": []}))) == 0
