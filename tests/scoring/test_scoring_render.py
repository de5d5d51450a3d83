"""Rendering: JSON-safe values, the CSV frame, the text table."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scoring import ScoringParams, format_table, report_frame, score_responses, to_jsonable


def test_to_jsonable() -> None:
    data = {"a": float("nan"), "b": [np.float64(1.5), np.int64(2), float("inf")], "c": None}
    assert to_jsonable(data) == {"a": None, "b": [1.5, 2, None], "c": None}


def test_frame_has_responders_then_pool_rows(make_rows: Callable) -> None:
    rows = make_rows("r1", [("correct", 4)], kind="human", group="PGY2") + make_rows(
        "m", [("wrong", 2)]
    )
    frame = report_frame(score_responses(rows, ScoringParams(n_boot=0)))
    assert frame["responder"].tolist() == ["m", "r1", "human_pool", "human_pool"]
    assert frame["kind"].tolist() == ["model", "human", "pool", "pool"]
    assert frame["group"].isna().tolist() == [True, False, True, False]  # CSV: empty
    assert frame.loc[3, "group"] == "PGY2"
    assert frame["param_scoring_spec_version"].unique().tolist() == ["1.0"]
    assert frame.loc[2, "readers"] == "r1"


def test_table_shows_na_and_cis(make_rows: Callable) -> None:
    rows = make_rows("m", [("idk", None), ("correct", 2)])
    text = format_table(score_responses(rows, ScoringParams(n_boot=30)))
    assert "RadLE-C" in text and "n/a" in text and "[" in text
    assert "scoring_spec_version=1.0" in text
