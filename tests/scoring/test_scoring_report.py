"""score_responses: the whole report, its contract and its edge cases."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pandas as pd
import pytest

from scoring import CI_METRICS, ScoringParams, UngradedRowsError, report_json, score_responses


def study(make_rows: Callable) -> list[dict]:
    readers = [
        [("correct", 4), ("wrong", 3), ("correct", 2), ("idk", None), ("correct", 4)],
        [("correct", 3), ("correct", 4), ("wrong", 1), ("correct", 0), ("wrong", 4)],
        [("idk", None), ("correct", 4), ("correct", 3), ("wrong", 2), ("correct", 1)],
    ]
    rows = []
    for i, answers in enumerate(readers):
        rows += make_rows(f"r{i}", answers, kind="human", group="PGY2" if i else "board")
    rows += make_rows("gpt", [("correct", 4), ("correct", 4), ("wrong", 4), ("idk", None),
                              ("correct", 3)])  # fmt: skip
    rows += make_rows("other", [("wrong", 2)] * 5)
    return rows


def test_contract_keys(make_rows: Callable) -> None:
    report = score_responses(study(make_rows), ScoringParams(n_boot=50))
    assert set(report) == {"responders", "human_pool", "params", "comparisons"}
    assert report["params"]["scoring_spec_version"] == "2.0"
    assert report["params"]["n_boot"] == 50
    for row in report["responders"]:
        for key in ("responder", "kind", "group", "n_cases", "radle_c", "radle_a", "radle_r",
                    "radle_s", "radle_h", "idk_rate", "brier", "ece", "aurc"):  # fmt: skip
            assert key in row
        for name in CI_METRICS:
            assert f"{name}_ci_low" in row
    models = [r for r in report["responders"] if r["kind"] == "model"]
    assert {r["responder"] for r in models} == {"gpt", "other"}
    for r in models:
        assert 0 < r["perm_p_vs_pool"] <= 1
        assert r["radle_c_diff_vs_pool_ci_low"] <= r["radle_c_diff_vs_pool_ci_high"]
    humans = [r for r in report["responders"] if r["kind"] == "human"]
    assert all("perm_p_vs_pool" not in r for r in humans)
    assert [g["group"] for g in report["human_pool"]["by_group"]] == ["PGY2", "board"]


def test_hand_derived_model_and_pool(make_rows: Callable) -> None:
    report = score_responses(study(make_rows), ScoringParams(n_boot=0))
    by = {r["responder"]: r for r in report["responders"]}
    # gpt: +5 +5 -5 0 +4 = 9 -> C = 1000 (1 + 9/25) = 1360
    assert by["gpt"]["radle_c"] == pytest.approx(1360.0)
    # r0: +5 -4 +3 0 +5 = 9 -> 1360; r1: +4 +5 -2 +1 -5 = 3 -> 1120;
    # r2: 0 +5 +4 -3 +2 = 8 -> 1320; complete coverage: pool = mean = 1266.67
    assert report["human_pool"]["radle_c"] == pytest.approx((1360 + 1120 + 1320) / 3)
    # difference vs the pool is only reported with the bootstrap on
    assert "radle_c_diff_vs_pool" not in by["gpt"]


def test_report_is_json_with_nulls(make_rows: Callable) -> None:
    rows = make_rows("m", [("idk", None)] * 2)
    text = report_json(score_responses(rows, ScoringParams(n_boot=20)))
    data = json.loads(text)
    assert data["responders"][0]["radle_r"] is None  # NaN -> null
    assert "NaN" not in text


def test_empty_frame_report() -> None:
    report = score_responses(pd.DataFrame(), ScoringParams(n_boot=20))
    assert report["responders"] == []
    assert math.isnan(report["human_pool"]["radle_c"])
    json.loads(report_json(report))


def test_ungraded_rows_raise(make_cell: Callable) -> None:
    row = make_cell("m", 1, "correct", 4)
    row["correct"] = None
    with pytest.raises(UngradedRowsError, match="m/1"):
        score_responses([row])


def test_explicit_case_ids(make_cell: Callable) -> None:
    # One correct L4 answer out of a 4-case exam: C = 1000 (1 + 5/20) = 1250
    report = score_responses(
        [make_cell("m", "a", "correct", 4)], ScoringParams(n_boot=0), case_ids=["a", "b", "c", "d"]
    )
    row = report["responders"][0]
    assert row["n_cases"] == 4 and row["radle_c"] == pytest.approx(1250.0)
    assert row["n_missing"] == 3 and row["completion"] == 0.25


def test_idk_score_parameter(make_rows: Callable) -> None:
    rows = make_rows("m", [("idk", None), ("correct", 4)])
    # idk_score = 1: sum = 1 + 5 = 6 -> C = 1000 (1 + 6/10) = 1600
    report = score_responses(rows, ScoringParams(n_boot=0, idk_score=1))
    assert report["responders"][0]["radle_c"] == pytest.approx(1600.0)
    assert report["params"]["idk_score"] == 1


def test_seed_reproducible(make_rows: Callable) -> None:
    a = score_responses(study(make_rows), ScoringParams(n_boot=40, seed=3))
    b = score_responses(study(make_rows), ScoringParams(n_boot=40, seed=3))
    assert report_json(a) == report_json(b)
