"""Rendering: JSON-safe values, the CSV frame, the text table."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from scoring import ScoringParams, format_table, report_frame, score_responses, to_jsonable
from tests.scoring.conftest import Row


def test_to_jsonable() -> None:
    data = {"a": float("nan"), "b": [np.float64(1.5), np.int64(2), float("inf")], "c": None}
    assert to_jsonable(data) == {"a": None, "b": [1.5, 2, None], "c": None}


def test_frame_has_responders_then_pool_rows(make_rows: Callable[..., list[Row]]) -> None:
    rows = make_rows("r1", [("correct", 4)], kind="human", group="PGY2") + make_rows(
        "m", [("wrong", 2)]
    )
    frame = report_frame(score_responses(rows, ScoringParams(n_boot=0)))
    assert frame["responder"].tolist() == ["m", "r1", "human_pool", "human_pool"]
    assert frame["kind"].tolist() == ["model", "human", "pool", "pool"]
    assert frame["group"].isna().tolist() == [True, False, True, False]  # CSV: empty
    assert frame.loc[3, "group"] == "PGY2"
    assert frame["param_scoring_spec_version"].unique().tolist() == ["2.0"]
    assert frame.loc[2, "readers"] == "r1"


def _table_rows(text: str) -> dict[str, dict[str, str]]:
    """The table's rows by responder, cells by header (cells are 2+ spaces apart)."""
    header, _rule, *lines = text.split("\n\n", 1)[0].splitlines()
    names = re.split(r"\s{2,}", header.strip())
    return {
        cells[0]: dict(zip(names, cells, strict=True))
        for line in lines
        if len(cells := re.split(r"\s{2,}", line.strip())) == len(names)
    }


def test_table_shows_na_and_cis(make_rows: Callable[..., list[Row]]) -> None:
    # Two cases: "I don't know" (0 points) and correct at Likert 2 (+3), so by SCORING.md
    # section 3: C = 1000 * (1 + 3 / (5 * 2)) = 1300, A = 1/2, R n/a (nothing at L >= 3),
    # S = 100 (no wrong answer), H = 0 (no coverage at L >= 3), IDK rate 1/2.
    rows = make_rows("m", [("idk", None), ("correct", 2)], group="lab")
    plain = _table_rows(format_table(score_responses(rows, ScoringParams(n_boot=0))))
    assert plain["m"] == {
        "responder": "m",
        "kind": "model",
        "group": "lab",
        "N": "2",
        "RadLE-C": "1300.0",
        "A": "0.500",
        "R": "n/a",
        "S": "100.0",
        "H": "0.0",
        "IDK": "0.500",
    }
    text = format_table(score_responses(rows, ScoringParams(n_boot=30)))
    m = _table_rows(text)["m"]
    # A resample of the two cases holds 0, 1 or 2 correct answers: C is 1000, 1300 or
    # 1600 and A 0, 0.5 or 1; 30 draws (seed 0) reach both ends. S and H never move.
    assert m["RadLE-C"] == "1300.0 [1000.0, 1600.0]"
    assert m["A"] == "0.500 [0.000, 1.000]"
    assert m["R"] == "n/a"
    assert m["S"] == "100.0 [100.0, 100.0]"
    assert m["H"] == "0.0 [0.0, 0.0]"
    assert m["IDK"] == "0.500 [0.000, 1.000]"
    assert "pool: 0 reader(s) with completion >= 1.0" in text  # the model is no reader
    assert "n_boot=30" in text and "scoring_spec_version=2.0" in text
