"""Hypothesis properties of SCORING.md: anchors, invariance, pool, identity, ranges."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import ScoringParams, report_json, responder_metrics, score_responses

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OUTCOMES = ("correct", "wrong", "idk", "invalid", "failure", "missing")


@st.composite
def studies(draw: Any, complete: bool = False) -> list[dict[str, Any]]:
    """Random studies: 1-4 humans, 0-3 models, 1-8 cases, every outcome possible."""
    n_cases = draw(st.integers(1, 8))
    n_humans = draw(st.integers(1, 4))
    n_models = draw(st.integers(0, 3))
    allowed = OUTCOMES[:-1] if complete else OUTCOMES
    rows = []
    for r in range(n_humans + n_models):
        kind = "human" if r < n_humans else "model"
        group = draw(st.sampled_from(["PGY2", "board", None])) if kind == "human" else None
        for c in range(n_cases):
            outcome = draw(st.sampled_from(allowed))
            if outcome == "missing" and not (r == 0 and c == 0):
                continue  # keep one row per case on responder 0 so the case set is fixed
            likert = draw(st.integers(0, 4))
            rows.append(_row(f"{kind}{r}", kind, group, c, outcome, likert))
    return rows


def _row(resp: str, kind: str, group: str | None, case: int, outcome: str, likert: int) -> dict:
    row: dict[str, Any] = {"responder": resp, "kind": kind, "group": group, "case_id": f"c{case}"}
    if outcome in ("correct", "wrong", "missing"):
        row.update(diagnosis="dx", likert=likert, correct=int(outcome == "correct"))
    elif outcome == "idk":
        row.update(diagnosis="I don't know", likert=None, correct=None)
    elif outcome == "invalid":
        row.update(diagnosis="dx", likert=None, correct=None)
    else:
        row.update(diagnosis="PARSE_FAILED", likert=None, correct=None)
    return row


def uniform(outcome: str, likert: int | None, n: int) -> list[dict[str, Any]]:
    return [_row("m", "model", None, c, outcome, likert or 0) for c in range(n)]


@FAST
@given(st.integers(1, 30))
def test_all_idk_is_1000(n: int) -> None:
    assert responder_metrics(uniform("idk", None, n))["radle_c"].iloc[0] == pytest.approx(1000.0)


@FAST
@given(st.integers(1, 30))
def test_all_correct_l4_is_2000_and_all_wrong_l4_is_0(n: int) -> None:
    assert responder_metrics(uniform("correct", 4, n))["radle_c"].iloc[0] == pytest.approx(2000.0)
    assert responder_metrics(uniform("wrong", 4, n))["radle_c"].iloc[0] == pytest.approx(0.0)


@FAST
@given(studies(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(rows: list[dict[str, Any]], rnd: random.Random) -> None:
    params = ScoringParams(n_boot=25)
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    assert report_json(score_responses(rows, params)) == report_json(
        score_responses(shuffled, params)
    )


@FAST
@given(studies(complete=True))
def test_pool_is_mean_of_readers_with_complete_coverage(rows: list[dict[str, Any]]) -> None:
    report = score_responses(rows, ScoringParams(n_boot=0))
    readers = [r for r in report["responders"] if r["kind"] == "human"]
    pool = report["human_pool"]
    assert pool["n_readers"] == len(readers)
    for name in ("radle_c", "radle_a", "radle_s", "idk_rate", "confident_error_rate"):
        assert pool[name] == pytest.approx(np.mean([r[name] for r in readers]))


@FAST
@given(studies(), st.sampled_from([0.0, 1.0]))
def test_s_and_c_identity(rows: list[dict[str, Any]], idk_score: float) -> None:
    # C = 1000 + 1000 (P - E + idk_score * n_idk) / (5N) and S = 100 (1 - E / (5N))
    # => C = 10 S + 200 P / N + 200 idk_score n_idk / N
    params = ScoringParams(n_boot=0, idk_score=idk_score)
    frame = responder_metrics(rows, params)
    for _, r in frame.iterrows():
        n = r["n_cases"]
        p = sum((lv + 1) * r[f"n_correct_l{lv}"] for lv in range(5))
        expected = 10 * r["radle_s"] + 200 * p / n + 200 * idk_score * r["n_idk"] / n
        assert r["radle_c"] == pytest.approx(expected)


RANGES = {
    "radle_c": (0, 2000),
    "radle_a": (0, 1),
    "attempted_accuracy": (0, 1),
    "radle_r": (0, 1),
    "radle_s": (0, 100),
    "radle_h": (0, 100),
    "h_coverage": (0, 1),
    "h_deferral": (0, 1),
    "idk_rate": (0, 1),
    "confident_error_rate": (0, 1),
    "brier": (0, 1),
    "ece": (0, 1),
    "spearman_rho": (-1, 1),
    "aurc": (0, 1),
    "radle_a_wilson_low": (0, 1),
    "radle_a_wilson_high": (0, 1),
}


@FAST
@given(studies(), st.sampled_from(["geometric", "harmonic", "arithmetic"]))
def test_every_metric_in_range(rows: list[dict[str, Any]], agg: str) -> None:
    report = score_responses(rows, ScoringParams(n_boot=20, h_aggregate=agg, min_completion=0.5))
    pool = report["human_pool"]
    for row in [*report["responders"], pool, *pool["by_group"]]:
        for name, (low, high) in RANGES.items():
            for key in (name, f"{name}_ci_low", f"{name}_ci_high"):
                value = row.get(key)
                if value is not None and not math.isnan(value):
                    assert low - 1e-9 <= value <= high + 1e-9, (row["responder"], key, value)
        if not math.isnan(row["radle_a"]):
            assert row["radle_a_wilson_low"] <= row["radle_a"] <= row["radle_a_wilson_high"]


@FAST
@given(studies())
def test_dataframe_and_records_agree(rows: list[dict[str, Any]]) -> None:
    params = ScoringParams(n_boot=0)
    assert report_json(score_responses(rows, params)) == report_json(
        score_responses(pd.DataFrame(rows), params)
    )
