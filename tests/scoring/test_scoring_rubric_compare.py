"""Rubric scores with bootstrap CIs and human pool vs model (hand-derived figures)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.rubric_compare import POOL, rubric_scores


def _frame(rows: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["responder", "kind", "case_id", "rubric"])


FRAME = _frame(
    [
        ("H1", "human", "a", 40), ("H1", "human", "b", 20), ("H1", "human", "c", 30),
        ("H2", "human", "a", 20), ("H2", "human", "b", 30),
        ("M", "model", "a", 30), ("M", "model", "b", 10), ("M", "model", "c", 40),
    ]
)  # fmt: skip


def test_pool_and_model_comparison_by_hand() -> None:
    result = rubric_scores(FRAME, n_boot=500, n_perm=500)
    table = result.responders.set_index("responder")
    # pool per case: a (40+20)/2 = 30, b (20+30)/2 = 25, c 30 -> mean 85/3
    assert table.loc[POOL, "mean"] == pytest.approx(85 / 3)
    assert table.loc[POOL, "total"] == pytest.approx(85)
    assert table.loc[POOL, "percent_of_ceiling"] == pytest.approx(100 * 85 / 120)
    assert table.loc[POOL, "n_solid"] == 3  # 30, 25, 30 are all Solid (24-31)
    assert table.loc["H1", "total"] == 90 and table.loc["H2", "n_cases"] == 2
    assert table.loc["M", "kind"] == "model" and table.loc[POOL, "kind"] == "pool"
    comp = result.comparisons.set_index("model")
    # d = (30-30, 10-25, 40-30) = (0, -15, 10); mean -5/3
    assert comp.loc["M", "n_cases"] == 3
    assert comp.loc["M", "diff"] == pytest.approx(-5 / 3)
    assert comp.loc["M", "pool_mean"] == pytest.approx(85 / 3)
    # every sign flip gives |T*| in {5, 25} >= |T| = 5, so p = (1 + B) / (B + 1) = 1
    assert comp.loc["M", "p_value"] == pytest.approx(1.0)
    assert comp.loc["M", "diff_ci_low"] <= -5 / 3 <= comp.loc["M", "diff_ci_high"]


def test_a_clear_difference_is_significant() -> None:
    rows = [("H", "human", f"c{i}", 30) for i in range(12)]
    rows += [("M", "model", f"c{i}", 10) for i in range(12)]
    comp = rubric_scores(_frame(rows), n_boot=200, n_perm=999).comparisons.iloc[0]
    # d_i = -20 for all 12 cases: only the all-negative and all-positive flips reach |T|
    assert comp["diff"] == -20 and comp["diff_ci_low"] == comp["diff_ci_high"] == -20
    assert comp["p_value"] < 0.01


def test_constant_scores_have_a_point_interval_and_empty_input() -> None:
    table = rubric_scores(_frame([("M", "model", c, 33) for c in "abcd"]), n_boot=100)
    row = table.responders.iloc[0]
    assert row["mean_ci_low"] == row["mean_ci_high"] == 33
    assert row["percent_ci_low"] == pytest.approx(82.5)
    assert table.comparisons.empty  # no humans, no pool
    assert rubric_scores(_frame([])).responders.empty


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=15),
    st.lists(st.integers(0, 40), min_size=1, max_size=15),
)
def test_intervals_stay_within_the_observed_range(human: list[int], model: list[int]) -> None:
    rows = [("H", "human", f"c{i}", s) for i, s in enumerate(human)]
    rows += [("M", "model", f"c{i}", s) for i, s in enumerate(model)]
    result = rubric_scores(_frame(rows), n_boot=100, n_perm=100)
    for r in result.responders.itertuples():
        assert r.min - 1e-9 <= r.mean_ci_low <= r.mean_ci_high <= r.max + 1e-9
    comp = result.comparisons.iloc[0]
    assert comp["n_cases"] == min(len(human), len(model))
    assert 0 < comp["p_value"] <= 1
    assert not np.isnan(comp["diff"])
