"""Chart data, chart builders and their PNG/SVG renders; the per-case matrix.

Pure: the frames are built by hand (a tidy frame, scored by the real library),
so these run without a database.
"""

from __future__ import annotations

import pandas as pd
import pytest

from reader_app.analysis.case_matrix import case_matrix
from reader_app.analysis.chart_data import (
    OUTCOMES,
    group_split,
    metric_bars,
    reliability,
    response_profile,
    risk_coverage,
    seniority,
)
from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.charts import (
    case_matrix_chart,
    chart_png,
    chart_svg,
    group_split_chart,
    metric_bars_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
)
from scoring import ScoringParams
from tests.reader_app.analysis.chart_frame import CASES, HOSTILE


def test_chart_frames(frame: pd.DataFrame) -> None:
    board = build_leaderboard(frame, CASES, ScoringParams(n_boot=100))
    bars = metric_bars(board, "radle_c")
    # R1: +5 +5 -4 + 0 = 6 -> C = 1000 (1 + 6/20) = 1300; R2: +3 -2 -2 -2 = -3 -> 850
    by = bars.set_index("name")
    assert by.loc["R1", "value"] == pytest.approx(1300.0)
    assert by.loc["Human pool", "value"] == pytest.approx((1300 + 850) / 2)
    assert list(bars["pool_value"]) == pytest.approx([1075.0] * len(bars))
    assert (bars["ci_low"] <= bars["value"]).all() and (bars["value"] <= bars["ci_high"]).all()
    assert "R1" not in set(metric_bars(board, readers=False)["name"])

    profile = response_profile(board)
    r1 = profile[profile["name"] == "R1"].set_index("segment")
    assert r1.loc["correct · L4", "count"] == 2 and r1.loc["wrong · L3", "count"] == 1
    assert r1.loc["I don't know", "share"] == pytest.approx(0.25)
    assert len(r1) == len(OUTCOMES)
    for _, shares in profile.groupby("name")["share"]:
        assert shares.sum() == pytest.approx(1.0)  # pools included: weights sum to N

    rel = reliability(board).set_index(["name", "likert"])
    assert rel.loc[("R2", 1), "accuracy"] == 0.0 and rel.loc[("R2", 1), "n"] == 3
    assert pd.isna(rel.loc[("R2", 0), "accuracy"])  # no answer at L0: undefined, not 0

    rc = risk_coverage(board).set_index(["name", "threshold"])
    # the model at L>=4: 4 answered of 4, 1 wrong -> coverage 1, risk 0.25
    assert rc.loc[(HOSTILE, 4), "coverage"] == 1.0
    assert rc.loc[(HOSTILE, 4), "risk"] == pytest.approx(0.25)


def test_group_split_merges_training_years(frame: pd.DataFrame) -> None:
    assert seniority("PGY3") == "trainees" and seniority("board-certified") == "board-certified"
    split = group_split(frame, CASES, ScoringParams(n_boot=50))
    c = split[split["metric"] == "radle_c"].set_index("group")
    assert c.loc["trainees", "value"] == pytest.approx(850.0)
    assert c.loc["board-certified", "value"] == pytest.approx(1300.0)
    assert c.loc["all readers", "n_readers"] == 2


def test_case_matrix_splits(frame: pd.DataFrame) -> None:
    matrix = case_matrix(frame, CASES, ScoringParams())
    cases = matrix.cases.set_index("case_id")
    # a: both readers right, the model wrong -> humans get, models miss
    assert cases.loc["a", "split"] == "humans get, models miss"
    assert cases.loc["a", "pool_accuracy"] == 1.0 and cases.loc["a", "difficulty"] == 0.0
    # c, d: no reader right, the model right -> models get, humans miss
    assert cases.loc["c", "split"] == "models get, humans miss"
    assert cases.loc["b", "split"] == "both get"  # R1 right, R2 wrong: half the pool
    assert list(matrix.cases["case_id"])[:2] == ["c", "d"]  # hardest first
    cell = matrix.cells.set_index(["responder", "case_id"])
    assert cell.loc[("R1", "d"), "outcome"] == "idk"
    assert cell.loc[("R1", "c"), "likert"] == 3
    assert len(matrix.cells) == 3 * 4


def test_every_chart_renders_offline_and_escapes_labels(frame: pd.DataFrame) -> None:
    board = build_leaderboard(frame, CASES, ScoringParams(n_boot=50))
    matrix = case_matrix(frame, CASES, board.params)
    charts = [
        metric_bars_chart(metric_bars(board)),
        response_profile_chart(response_profile(board)),
        reliability_chart(reliability(board)),
        risk_coverage_chart(risk_coverage(board)),
        group_split_chart(group_split(frame, CASES, board.params)),
        case_matrix_chart(matrix.cells, matrix.cases),
    ]
    for chart in charts:
        svg = chart_svg(chart)
        assert svg.startswith("<svg") and "<script" not in svg
        png = chart_png(chart)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    svg = chart_svg(charts[0])
    assert "&lt;/text&gt;&lt;script&gt;" in svg  # the hostile run name, as escaped text
