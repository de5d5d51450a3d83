"""G, GA and U where analysts see them: the leaderboard, the score JSON/CSV, the report,
the accuracy-against-grounding chart and the per-case thumbnail.

The study is tests/reader_app/analysis/grounding_scenario.py (hits derived there).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from sqlmodel import Session

from reader_app.analysis.case_grounding import (
    analyst_case_grounding,
    case_grounding,
    grounding_case_ids,
    thumbnails,
)
from reader_app.analysis.chart_data import accuracy_grounding
from reader_app.analysis.data import study_data
from reader_app.analysis.grounding_thumbnail import (
    GROWN,
    HUMAN,
    LEGEND_PX,
    MODEL,
    REGION,
    Marker,
    draw_grounding,
)
from reader_app.analysis.html_report import render_report
from reader_app.analysis.leaderboard import build_leaderboard, display_differences, display_table
from reader_app.analysis.leaderboard_view import leaderboard_html
from reader_app.charts import accuracy_grounding_chart, chart_svg
from reader_app.cli import main
from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.study.assets import load_asset
from scoring import ScoringParams, grounding_report, to_jsonable
from scoring.io import read_responses_csv
from scoring.regions import Box
from tests.factories import make_reader, make_study, png_bytes
from tests.reader_app.analysis.grounding_scenario import GROUNDED, grounded_study
from tests.reader_app.analysis.scenario import grade_everything, plan_for, simulate_reader

NO_BOOT = ScoringParams(n_boot=0)


def test_leaderboard_g_ga_u_by_hand(session: Session, settings: Settings) -> None:
    study = grounded_study(session, settings)
    data = study_data(session=session, study=study)
    assert data.grounded_case_ids == GROUNDED and data.text_only_runs == {"vlm"}
    board = build_leaderboard(data.frame, data.case_ids, NO_BOOT, data.grounded_case_ids)
    assert board.has_grounding and board.grounded_case_ids == GROUNDED
    rows = board.table.set_index("name")
    # R01 all correct; hits 1,1,0,1 -> G = GA = 3/4; U = 1 right answer of 4 not hit = 1/4
    # R02 CWCWC: no hit; right on case-000 and case-004 -> G = GA = 0, U = 2/2 = 1
    # vlm all correct, hit only case-000 -> G = GA = 1/4, U = 3/4
    expected = {
        "R01": (0.75, 0.75, 0.25),
        "R02": (0.0, 0.0, 1.0),
        "vlm": (0.25, 0.25, 0.75),
        # pool, per case the mean of R01 and R02: hits .5,.5,0,.5 -> G = 1.5/4;
        # right and hit .5,.5,0,.5 -> GA = 1.5/4; right 1,.5,.5,1 = 3 -> U = (3 - 1.5)/3
        "Human pool": (0.375, 0.375, 0.5),
    }
    for name, (g, ga, u) in expected.items():
        got = rows.loc[name, ["grounding_rate", "grounded_accuracy", "ungrounded_correct_share"]]
        assert list(got) == pytest.approx([g, ga, u]), name
    assert {"grounding_rate", "grounded_accuracy_ci_low"} <= set(board.arms().columns)
    shown = display_table(board).set_index("name")
    assert shown.loc["R01", "G"] == "0.750" and shown.loc["R02", "U"] == "1.000"
    assert shown.loc["Pool: board-certified", "G"] == "n/a"  # group pools have none
    html = leaderboard_html(board)
    assert 'title="G (grounding rate), 95% CI below">G</th>' in html
    assert ">GA</th>" in html and ">U</th>" in html


def test_ci_and_differences_come_from_grounding_report(
    session: Session, settings: Settings
) -> None:
    study = grounded_study(session, settings)
    data = study_data(session=session, study=study)
    params = ScoringParams(n_boot=300, seed=7)
    board = build_leaderboard(data.frame, data.case_ids, params, data.grounded_case_ids)
    direct = grounding_report(data.frame, GROUNDED, params, case_ids=list(data.case_ids))
    assert board.report["grounding"] == direct
    r01 = next(r for r in direct["responders"] if r["responder"] == "R01")
    row = board.table.set_index("name").loc["R01"]
    assert row["grounding_rate_ci_low"] == r01["grounding_rate_ci_low"]
    assert row["grounding_rate_ci_high"] == r01["grounding_rate_ci_high"]
    diffs = display_differences(board).set_index("model run")
    vlm = next(r for r in direct["responders"] if r["responder"] == "vlm")
    assert diffs.loc["vlm", "Δ G"].startswith(f"{vlm['grounding_rate_diff_vs_pool']:.3f} [")
    assert diffs.loc["vlm", "p (sign-flip, hits)"] == f"{vlm['grounding_rate_perm_p_vs_pool']:.4f}"


def test_a_study_without_regions_shows_no_grounding(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3)
    simulate_reader(session, study, "R01", plan_for(["case-000", "case-001", "case-002"], "CWC"))
    grade_everything(session, study)
    data = study_data(session=session, study=study)
    assert data.grounded_case_ids == ()
    board = build_leaderboard(data.frame, data.case_ids, NO_BOOT, data.grounded_case_ids)
    assert not board.has_grounding and "grounding" not in board.report
    assert not any("ground" in c for c in board.arms().columns)  # the leaderboard CSV
    assert "G" not in display_table(board).columns and ">G</th>" not in leaderboard_html(board)
    assert accuracy_grounding(board).empty
    page = render_report(data, NO_BOOT)
    assert "<th>G</th>" not in page and "Accuracy against grounding" not in page


def test_score_json_and_csv_carry_grounding(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = grounded_study(session, settings)
    path = tmp_path / "responses.csv"
    assert main(["export", study.slug, "--what", "responses", "-o", str(path)]) == 0
    exported = read_responses_csv(path)
    assert set(exported.loc[exported["case_id"] == "case-002", "hit"]) == {""}
    capsys.readouterr()
    assert main(["score", str(path), "--format", "json", "--bootstrap", "200"]) == 0
    report = json.loads(capsys.readouterr().out)
    params = ScoringParams(n_boot=200)
    expected = to_jsonable(grounding_report(exported, GROUNDED, params))
    assert report["grounding"] == expected
    by_name = {r["responder"]: r for r in report["grounding"]["responders"]}
    assert by_name["R01"]["grounding_rate"] == 0.75 and by_name["vlm"]["hits"] == 1.0
    # the app's leaderboard has the very same figures (same cases, params, resamples)
    data = study_data(session=session, study=study)
    board = build_leaderboard(data.frame, data.case_ids, params, data.grounded_case_ids)
    assert to_jsonable(board.report["grounding"]) == expected
    # CSV: one row per responder and pool, G/GA/U as columns (group pools empty)
    assert main(["score", str(path), "--format", "csv", "--bootstrap", "0"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("responder")
    assert frame.loc["R02", "ungrounded_correct_share"] == 1.0
    pool = frame[(frame["kind"] == "pool") & frame["group"].isna()].iloc[0]
    assert pool["grounding_rate"] == 0.375
    assert main(["score", str(path), "--bootstrap", "0"]) == 0
    table = capsys.readouterr().out
    assert {"G", "GA", "U"} <= set(table.splitlines()[0].split())
    assert "grounding over 4 case(s)" in table
    # a file without regions (hit blank everywhere) scores as before, without a section
    blank = exported.assign(hit="")
    blank.to_csv(tmp_path / "blank.csv", index=False)
    capsys.readouterr()
    assert main(["score", str(tmp_path / "blank.csv"), "--format", "json", "--bootstrap", "0"]) == 0
    assert "grounding" not in json.loads(capsys.readouterr().out)


def test_grounded_cases_file_counts_a_case_nobody_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = pd.DataFrame(
        {
            "responder": ["m", "m"],
            "kind": ["model", "model"],
            "case_id": ["a", "b"],
            "diagnosis": ["x", "y"],
            "likert": ["4", "4"],
            "correct": ["1", "1"],
            "hit": ["1", ""],
        }
    )
    rows.to_csv(tmp_path / "r.csv", index=False)
    (tmp_path / "cases.txt").write_text("a\nb\nc\n")
    (tmp_path / "grounded.txt").write_text("case_id\na\nc\n")
    argv = ["score", str(tmp_path / "r.csv"), "--format", "json", "--bootstrap", "0"]
    capsys.readouterr()
    assert main([*argv, "--cases", str(tmp_path / "cases.txt")]) == 0
    # from the file alone only case a is grounded: G = 1/1
    m = json.loads(capsys.readouterr().out)["grounding"]["responders"][0]
    assert (m["n_grounded"], m["grounding_rate"]) == (1, 1.0)
    argv += ["--cases", str(tmp_path / "cases.txt")]
    assert main([*argv, "--grounded-cases", str(tmp_path / "grounded.txt")]) == 0
    # a and c have regions; c has no row (a miss): G = 1/2
    m = json.loads(capsys.readouterr().out)["grounding"]["responders"][0]
    assert (m["n_grounded"], m["grounding_rate"]) == (2, 0.5)


def test_report_has_the_columns_and_the_chart(session: Session, settings: Settings) -> None:
    study = grounded_study(session, settings)
    page = render_report(study_data(session=session, study=study), NO_BOOT)
    assert "<th>G</th><th>GA</th><th>U</th>" in page
    assert "Grounding over the 4 case(s) with a reference region" in page
    assert '<img class="chart" alt="Accuracy against grounding"' in page


def test_chart_data_puts_humans_and_models_on_one_plot(
    session: Session, settings: Settings
) -> None:
    study = grounded_study(session, settings)
    data = study_data(session=session, study=study)
    board = build_leaderboard(data.frame, data.case_ids, NO_BOOT, data.grounded_case_ids)
    points = accuracy_grounding(board, text_only=data.text_only_runs).set_index("name")
    assert list(points.index) == ["Human pool", "vlm", "R01", "R02"]  # no group pool
    assert points.loc["vlm", "series"] == "model run · text only"
    assert points.loc["R01", "series"] == "reader" and points.loc["Human pool", "arm"] == "pool"
    # R02: 3 of 5 right -> accuracy 0.6, G = 0
    assert (points.loc["R02", "accuracy"], points.loc["R02", "grounding_rate"]) == (0.6, 0.0)
    assert points.loc["vlm", "grounding_rate"] == 0.25 and points.loc["vlm", "n_grounded"] == 4
    no_readers = accuracy_grounding(board, readers=False)
    assert set(no_readers["series"]) == {"human pool", "model run"}
    chart = accuracy_grounding_chart(points.reset_index())
    marks = chart["layer"][3]["encoding"]
    # one legend names the four series (a None on any channel would drop it)
    assert all(marks[c].get("legend", {}) is not None for c in ("stroke", "fill", "shape", "size"))
    assert (
        marks["fill"]["scale"]["range"][
            marks["fill"]["scale"]["domain"].index("model run · text only")
        ]
        == "#ffffff"
    )  # hollow
    svg = chart_svg(chart)
    assert "<svg" in svg and "model run · text only" in svg and "grounding rate G" in svg


def _rgb(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def test_thumbnail_draws_box_grown_box_mask_and_markers_at_their_pixels() -> None:
    # a 100 x 50 grey image drawn at 200 px: every stored pixel is 2 x 2 drawn pixels
    mask = np.zeros((50, 100), dtype=bool)
    mask[10:20, 60:80] = True  # drawn rows 20..39, cols 120..159
    png = draw_grounding(
        png_bytes(100, 50, shade=128),
        boxes=[Box(10, 10, 20, 10)],  # [10, 30) x [10, 20) -> drawn cols 20..59, rows 20..39
        mask=mask,
        markers=[
            Marker(50, 20, "human"),  # drawn at (100, 40)
            Marker(80, 40, "model"),  # drawn at (160, 80)
            Marker(30, 40, "model", text_only=True),  # hollow, at (60, 80)
        ],
        tolerance=1,  # the grown box starts at (10 - 1) * 2 = 18
        max_side=200,
    )
    img = _rgb(png)
    grey = (128, 128, 128)
    assert img.size == (200, 100 + LEGEND_PX)
    assert img.getpixel((20, 30)) == REGION and img.getpixel((21, 30)) == REGION  # left edge
    assert img.getpixel((59, 30)) == REGION and img.getpixel((40, 20)) == REGION  # right, top
    assert img.getpixel((40, 30)) == grey  # inside the box: the image itself
    assert img.getpixel((18, 30)) == GROWN and img.getpixel((17, 30)) == grey
    assert img.getpixel((120, 30)) == REGION and img.getpixel((159, 30)) == REGION  # contour
    assert img.getpixel((140, 30)) == grey and img.getpixel((119, 30)) == grey
    assert img.getpixel((100, 40)) == HUMAN and img.getpixel((160, 80)) == MODEL
    assert img.getpixel((60, 80)) == grey  # a text-only run's diamond is hollow...
    outline = [img.getpixel((x, 80)) for x in range(52, 57)]
    assert MODEL in outline  # ...its left corner is drawn
    assert img.getpixel((5, 100 + LEGEND_PX // 2)) != grey  # the legend strip is below


def test_case_thumbnails_pick_the_region_slice_and_its_markers(
    session: Session, settings: Settings
) -> None:
    study = grounded_study(session, settings)
    assert grounding_case_ids(session=session, study_id=study.id or 0) == (
        *GROUNDED,
        "case-002",  # no region, but located answers
    )
    strip = case_grounding(session=session, study=study, source_id="case-004")
    assert strip is not None and strip.kind == "strip" and len(strip.images) == 4
    assert strip.shown_slices() == (3,)  # the slice with the box
    [thumb] = thumbnails(strip, lambda sha: load_asset(settings.asset_dir, sha), max_side=128)
    # only R01's marker is on slice 3 (R02 pointed at slice 2)
    assert (thumb.slice_no, thumb.n_markers) == (3, 1)
    img = _rgb(thumb.png)  # 64 x 48 at 128: scale 2; R01 at (15, 15) -> (30, 30)
    assert img.size == (128, 96 + LEGEND_PX) and img.getpixel((30, 30)) == HUMAN
    assert img.getpixel((20, 25)) == REGION  # box 10,10,10,10: left edge at x = 20
    marks = {m.responder: m for m in strip.marks}
    assert (marks["R01"].hit, marks["R02"].hit, marks["vlm"].hit) == (True, False, False)

    spot = case_grounding(session=session, study=study, source_id="case-000")
    assert spot is not None and spot.shown_slices() == (None,)
    [thumb] = thumbnails(spot, lambda sha: load_asset(settings.asset_dir, sha), max_side=128)
    img = _rgb(thumb.png)
    assert thumb.n_markers == 3 and img.getpixel((62, 30)) == HUMAN  # R01 at (31, 15)
    assert img.getpixel((64, 30)) == HUMAN  # R02 at (32, 15): drawn at (64, 30)
    assert img.getpixel((30, 30)) != MODEL  # vlm (text only) at (15, 15): hollow
    assert case_grounding(session=session, study=study, source_id="nope") is None


def test_only_analysts_and_coordinators_see_the_region(
    session: Session, settings: Settings
) -> None:
    study = grounded_study(session, settings)
    reader = make_reader(session, study, code="R09", ready=True).reader
    with pytest.raises(AuthError):
        analyst_case_grounding(session=session, actor=reader, source_id="case-004")
    analyst = make_reader(session, study, code="AN1", role="analyst").reader
    cases, view = analyst_case_grounding(session=session, actor=analyst, source_id="case-004")
    assert cases[:4] == GROUNDED and view is not None and view.source_id == "case-004"
    _, first = analyst_case_grounding(session=session, actor=analyst, source_id="nope")
    assert first is not None and first.source_id == "case-000"  # unknown: the first case
