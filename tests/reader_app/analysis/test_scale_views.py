"""The views built for RadLE scale: the compact leaderboard (order, cells, escaping),
the per-case matrix's numeric order and disagreement filter, the charts' colour families
and legends, the synthetic benchmark-scale study, and imported readers on the progress
page. Expected numbers are derived by hand in the comments."""

from __future__ import annotations

import math
import re
from html import unescape

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlmodel import Session

from reader_app.analysis.case_matrix import case_matrix, natural_key
from reader_app.analysis.chart_data import reliability, risk_coverage
from reader_app.analysis.coordinator import (
    IMPORTED,
    PROGRESS_SHOWN,
    progress_display,
    reader_counts,
    reader_progress,
)
from reader_app.analysis.data import study_data
from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.analysis.leaderboard_view import (
    ci_text,
    leaderboard_html,
    sorted_arms,
    text_table_html,
)
from reader_app.charts import reliability_chart, risk_coverage_chart
from reader_app.charts.palette import HUMANS, MODELS, POOL, responders
from reader_app.core.settings import Settings
from reader_app.models import utcnow
from reader_app.runs.synthetic import Scale, build_radle_scale_study, radle_csv
from reader_app.study.casebank import get_study
from scoring import ScoringParams
from tests.factories import make_reader

HOSTILE = "<b>R2</b>"


def _row(who: str, kind: str, case: str, step: str, group: str | None = "g") -> dict:  # type: ignore[type-arg]
    """step: C4 correct at L4, W0 wrong at L0, I idk."""
    if step == "I":
        return dict(responder=who, kind=kind, group=group, case_id=case, status="idk",
                    diagnosis="", likert=None, correct=None)  # fmt: skip
    return dict(responder=who, kind=kind, group=group, case_id=case, status="answered",
                diagnosis="dx", likert=int(step[1]), correct=int(step[0] == "C"))  # fmt: skip


def _frame(plans: dict[tuple[str, str], list[str]], cases: list[str]) -> pd.DataFrame:
    rows = [
        _row(who, kind, case, step, "g" if kind == "human" else "lab")
        for (who, kind), steps in plans.items()
        for case, step in zip(cases, steps, strict=True)
    ]
    frame = pd.DataFrame(rows)
    frame["likert"] = frame["likert"].astype("Int64")
    frame["correct"] = frame["correct"].astype("Int64")
    return frame


CASES = ["1", "2", "3"]
PLANS = {
    ("m1", "model"): ["C4", "C4", "C4"],  # 5+5+5 = 15 of 15 -> C = 1000 (1 + 15/15) = 2000
    ("m2", "model"): ["W4", "C0", "I"],  # -5+1+0 = -4 -> 1000 (1 - 4/15) = 733.3
    ("R1", "human"): ["C4", "W0", "C2"],  # 5-1+3 = 7 -> 1466.7
    (HOSTILE, "human"): ["C1", "C1", "C1"],  # 2+2+2 = 6 -> 1400
}
# pool: per case the mean of the readers' points: 3.5, 0.5, 2.5 = 6.5 -> 1433.3


def test_the_leaderboard_sorts_by_radle_c_and_shows_every_metric() -> None:
    board = build_leaderboard(_frame(PLANS, CASES), CASES, ScoringParams(n_boot=0))
    arms = sorted_arms(board)
    # the group pool "Pool: g" equals the pool (one group): it follows it, table order
    assert list(arms["name"]) == ["m1", "R1", "Human pool", "Pool: g", HOSTILE, "m2"]
    assert [round(v, 1) for v in arms["radle_c"]] == [2000.0, 1466.7, 1433.3, 1433.3, 1400.0, 733.3]
    assert list(sorted_arms(board, by="name")["name"])[:2] == [HOSTILE, "Human pool"]
    assert list(sorted_arms(board, by="arm")["name"]) == list(board.table["name"])
    assert list(sorted_arms(board, readers=False)["name"]) == ["m1", "Human pool", "Pool: g", "m2"]
    with pytest.raises(ValueError, match="sort by one of"):
        sorted_arms(board, by="radle_x")

    html = leaderboard_html(board)
    assert html.count("<tr class=") == 6 and len(re.findall(r"<th[ >]", html)) == 8
    assert HOSTILE not in html and "&lt;b&gt;R2&lt;/b&gt;" in html  # text, never markup
    assert "<td>2000.0</td>" in html and 'class="ci"' not in html  # B = 0: no CI line
    assert html.index('data-name="m1"') < html.index('data-name="m2"')


def test_a_cell_carries_its_ci_on_a_second_line_and_na_when_undefined() -> None:
    board = build_leaderboard(_frame(PLANS, CASES), CASES, ScoringParams(n_boot=50))
    html = leaderboard_html(board)
    m1 = board.table.set_index("name").loc["m1"]
    # m1 is right at L4 on every case: every resample gives 2000
    assert m1["radle_c_ci_low"] == m1["radle_c_ci_high"] == 2000.0
    assert '<td>2000.0<span class="ci">2000.0–2000.0</span></td>' in html
    assert ci_text(1.0, 2.0, 3) == "1.000–2.000" and ci_text(math.nan, 2.0, 1) == ""
    # R at Likert >= 3 for the reader who never said more than 1: undefined -> n/a
    assert math.isnan(board.table.set_index("name").loc[HOSTILE, "radle_r"])
    assert "n/a" in html


@given(st.lists(st.text(max_size=20), min_size=1, max_size=4))
def test_a_text_table_shows_every_cell_as_escaped_text(cells: list[str]) -> None:
    """Model minus pool and model vs reader panel, drawn as the leaderboard (issue 43):
    each cell and header is the text given, escaped, in order; the first column left."""
    frame = pd.DataFrame([cells], columns=[f"c{i}" for i in range(len(cells))])
    headers = [f"<h{i}>" for i in range(len(cells))]
    html = text_table_html(frame, headers, key="lb_diff")
    assert 'data-testid="lb_diff"' in html and 'class="rs-lb"' in html
    head, body = html.split("<tbody>")
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head) == [
        f"&lt;h{i}&gt;" for i in range(len(cells))
    ]
    shown = re.findall(r"<td([^>]*)>([^<]*)</td>", body)
    assert [unescape(text) for _, text in shown] == cells  # nothing dropped, nothing markup
    assert [cls for cls, _ in shown] == [' class="txt"'] + [""] * (len(cells) - 1)


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=40))
def test_natural_key_orders_digit_runs_as_numbers(numbers: list[int]) -> None:
    ids = [str(n) for n in numbers]
    assert sorted(ids, key=natural_key) == [str(n) for n in sorted(numbers)]


def test_natural_key_on_mixed_ids() -> None:
    ids = ["case-10", "case-2", "case-1b", "Case-1a", "x"]
    assert sorted(ids, key=natural_key) == ["Case-1a", "case-1b", "case-2", "case-10", "x"]


def test_the_matrix_puts_equal_difficulty_in_numeric_order_and_finds_disagreements() -> None:
    cases = ["100", "10", "2", "9"]
    plans = {
        ("R1", "human"): ["C4", "C4", "C4", "W4"],  # case 9: both readers wrong
        ("R2", "human"): ["C3", "C3", "C3", "W3"],
        ("m1", "model"): ["C4", "W4", "C4", "W4"],  # wrong on 10 where the pool is right
        ("m2", "model"): ["C4", "C4", "C4", "C4"],  # right on 9 where the pool is wrong
    }
    matrix = case_matrix(_frame(plans, cases), tuple(sorted(cases)), ScoringParams(n_boot=0))
    # difficulty: 9 -> 1.0 first; 2, 10, 100 -> 0.0, in numeric (not text) order
    assert list(matrix.cases["case_id"]) == ["9", "2", "10", "100"]
    assert list(matrix.chosen("disagree")["case_id"]) == ["9", "10"]
    assert list(matrix.chosen("disagree", "m1")["case_id"]) == ["10"]
    assert list(matrix.chosen("disagree", "m2")["case_id"]) == ["9"]
    assert list(matrix.chosen("all")["case_id"]) == ["9", "2", "10", "100"]
    assert set(matrix.page(matrix.chosen("disagree", "m1"))["case_id"]) == {"10"}
    with pytest.raises(ValueError, match="filter must be one of"):
        matrix.chosen("nope")


def test_series_colours_by_kind_family_pools_heaviest_and_legends_name_everyone() -> None:
    plans = {(f"R{i}", "human"): ["C4", "W1", "C2"] for i in range(14)}
    plans |= {(f"m{i}", "model"): ["C3", "C1", "W2"] for i in range(18)}
    board = build_leaderboard(_frame(plans, CASES), CASES, ScoringParams(n_boot=0))
    rel = reliability(board)
    series = responders(rel).set_index("name")
    assert series.loc["Human pool", "colour"] == POOL
    assert series.loc["Human pool", "width"] > series.loc["Pool: g", "width"]
    assert series.loc["Pool: g", "width"] > series.loc["R0", "width"]
    assert {series.loc[f"m{i}", "colour"] for i in range(18)} <= set(MODELS)
    assert {series.loc[f"R{i}", "colour"] for i in range(14)} <= set(HUMANS)
    in_order = series[series["arm"] == "model"]["colour"]
    assert in_order.iloc[:16].nunique() == 16  # the first 16 runs: 16 colours, then again
    for chart in (reliability_chart(rel), risk_coverage_chart(risk_coverage(board))):
        spec = chart
        layers = spec.get("layer", [spec])
        colours = [lay["encoding"]["color"] for lay in layers if "color" in lay.get("encoding", {})]
        named = [c for c in colours if c.get("field") == "name"]
        assert named and all(c["legend"]["symbolLimit"] == 0 for c in named)
        assert set(named[0]["scale"]["domain"]) == set(rel["name"])  # every series, 34
        params = [p for lay in layers for p in lay.get("params", [])] + spec.get("params", [])
        assert any(p.get("bind") == "legend" for p in params)  # click to highlight


def test_the_synthetic_study_is_complete_and_graded(session: Session, settings: Settings) -> None:
    scale = Scale(cases=12, readers=3, models=2, seed=4)
    text = radle_csv(scale)
    assert len(text.strip().splitlines()) == 1 + 12 * 5
    slug = build_radle_scale_study(session, settings.asset_dir, scale=scale)
    assert build_radle_scale_study(session, settings.asset_dir, scale=scale) == slug  # again: as is
    study = get_study(session=session, slug=slug)
    assert study is not None
    data = study_data(session=session, study=study)
    assert data.case_ids == tuple(sorted(str(i) for i in range(1, 13)))
    assert len(data.frame) == 12 * 5 and data.n_pending == 0
    assert data.responders("human") == ["R01", "R02", "R03"]
    assert data.responders("model") == ["model-01", "model-02"]
    groups = data.frame[data.frame["kind"] == "human"].groupby("responder")["group"].first()
    # seniorities post-MD 6y, PGY3, PGY2 in RadLE's two groups
    assert list(groups) == ["board-certified", "trainees", "trainees"]

    # imported readers on the coordinator's progress page: never "invited", never stalled
    coordinator = make_reader(session, study, code="COORD", role="coordinator").reader
    make_reader(session, study, code="R-link", group="PGY1")
    later = utcnow() + pd.Timedelta(days=30).to_pytimedelta()
    progress = reader_progress(session=session, actor=coordinator, now=later)
    by = progress.set_index("reader")
    assert list(by.loc[["R01", "R02", "R03"], "invited"]) == [IMPORTED] * 3
    assert list(by.loc[["R01", "R02", "R03"], "status"]) == ["finished"] * 3
    assert not by.loc[["R01", "R02", "R03"], "stalled"].any()
    assert by.loc["R-link", "invited"] == "invite link" and by.loc["R-link", "stalled"]
    counts = reader_counts(progress)
    assert (counts["invited"], counts["imported"], counts["stalled"]) == (1, 3, 1)
    shown = progress_display(progress)
    text_cells = {str(v) for v in shown.to_numpy().ravel()}
    assert not text_cells & {"None", "nan", "NaN", "<NA>", "NaT"}
    assert shown.set_index("reader").loc["R-link", "last_activity"] == "never"
    # the page's narrow table says how a reader came and whether they stalled in the status
    assert list(shown.columns) == list(PROGRESS_SHOWN)
    assert shown.set_index("reader").loc["R01", "status"] == "imported"
    assert shown.set_index("reader").loc["R-link", "status"] == "⚠ stalled"
    assert shown.set_index("reader").loc["R-link", "answered"].startswith("0 of ")
