"""The coordinator's and the analyst's pages in real Chromium.

- the coordinator sees an invited reader who has not started;
- a reader who types the analyst's URL gets the reader's page, never the leaderboard;
- on the demo study with three simulated readers (exam services) and two model
  runs (runs importer), graded through the key and an adjudicator, the analyst
  sees the leaderboard and the response profile (screenshots in test-artifacts/),
  downloads the chart as PNG and the MRMC long format as CSV.

These run on SQLite only (the services under them are tested on PostgreSQL too).
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

from reader_app.analysis.mrmc import MRMC_COLUMNS
from reader_app.core.settings import Settings
from reader_app.ingest.demo import ensure_demo_study
from reader_app.study.casebank import get_study
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import submit_button
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

pytestmark = pytest.mark.browser

# the demo's scored diagnosis cases (its report-mode case is scored by the rubric instead)
DEMO_CASES = ["chest-cr", "head-ct-strip", "shoulder-mr", "tibia-cr"]


@pytest.fixture
def db_url(sqlite_url: str) -> str:
    return sqlite_url


def _open(page: Page, served: ServedApp, path: str, token: str) -> None:
    page.goto(f"{served.url}/{path}?token={token}")


def test_coordinator_sees_a_reader_who_has_not_started(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    simulate_reader(session, study, "R-busy", plan_for(["case-000"], "C"))
    make_reader(session, study, code="R-quiet", group="PGY1")
    token = make_reader(session, study, code="C01", role="coordinator").token

    _open(page, served, "progress", token)
    attention = page.locator(".st-key-co_attention")
    expect(attention).to_contain_text("Not started: R-quiet", timeout=30_000)
    expect(page.get_by_role("heading", name="Progress")).to_be_visible()
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    expect(page.get_by_test_id("stProgress").first).to_be_visible()
    page.screenshot(path=str(artifact("coordinator-progress.png")), full_page=True)


def test_a_reader_is_refused_at_the_analyst_url(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    import_model_run(session, study, "secret-run-77", plan_for(["case-000", "case-001"], "CW"))
    grade_everything(session, study)
    token = make_reader(session, study, code="R01", ready=True).token

    # the analyst's pages: /charts, /per-case, /exports, /report (the leaderboard is an
    # analyst's "/"; /analyst is its name in the page list). Each gives the reader their exam.
    for path in ("analyst", "charts", "exports", "report"):
        _open(page, served, path, token)
        expect(submit_button(page)).to_be_visible(timeout=30_000)
        assert page.get_by_role("heading", name="Leaderboard").count() == 0
        assert "secret-run-77" not in page.content(), path
        assert "Human pool" not in page.content(), path


@pytest.fixture
def demo_with_results(session: Session, settings: Settings) -> str:
    """The demo study, three readers through the exam, two model runs, all graded."""
    ensure_demo_study(settings)
    study = get_study(session=session, slug="demo")
    assert study is not None
    simulate_reader(session, study, "R01", plan_for(DEMO_CASES, "CWCM"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(DEMO_CASES, "CCIC"), group="board-certified")
    simulate_reader(session, study, "R03", plan_for(DEMO_CASES, "cwCI"), group="PGY2")
    import_model_run(session, study, "vlm-alpha", plan_for(DEMO_CASES, "CCWW"), group="lab-a")
    import_model_run(session, study, "vlm-beta", plan_for(DEMO_CASES, "ICcC"), group="lab-b")
    grade_everything(session, study)
    return make_reader(session, study, code="AN1", role="analyst").token


def test_analyst_leaderboard_charts_and_downloads(
    served: ServedApp, page: Page, demo_with_results: str, tmp_path: Path
) -> None:
    token = demo_with_results
    page.set_viewport_size({"width": 1800, "height": 1100})  # every metric column in view
    _open(page, served, "", token)  # the leaderboard is the analyst's landing page
    expect(page.get_by_role("heading", name="Model minus human pool")).to_be_visible(timeout=30_000)
    # model minus pool and model vs reader panel: HTML tables, one row per model run
    for key in ("lb_diff", "lb_mrmc"):
        table = page.get_by_test_id(key)
        expect(table).to_be_visible()
        firsts = table.locator("tbody tr td:first-child").all_inner_texts()
        assert sorted(firsts) == ["vlm-alpha", "vlm-beta"], (key, firsts)
    assert page.get_by_test_id("stDataFrame").count() == 0  # no grid on the sign-in page
    expect(page.locator(".st-key-lb_c canvas, .st-key-lb_c svg").first).to_be_visible()
    page.screenshot(path=str(artifact("analyst-leaderboard.png")), full_page=True)

    _open(page, served, "charts", token)
    chart = page.locator(".st-key-ch_profile").get_by_test_id("stVegaLiteChart")
    expect(chart.locator("canvas, svg").first).to_be_visible(timeout=30_000)
    chart.screenshot(path=str(artifact("analyst-response-profile.png")))
    with page.expect_download(timeout=30_000) as got:
        page.locator(".st-key-ch_profile_png button").click()
    png = Path(got.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000
    assert got.value.suggested_filename == "demo-response-profile.png"
    artifact("analyst-response-profile-download.png").write_bytes(png)

    _open(page, served, "exports", token)
    button = page.locator(".st-key-ex_mrmc button")
    expect(button).to_be_visible(timeout=30_000)
    with page.expect_download(timeout=30_000) as got:
        button.click()
    assert got.value.suggested_filename == "demo-mrmc.csv"
    mrmc = pd.read_csv(io.StringIO(Path(got.value.path()).read_text()), dtype=str)
    assert list(mrmc.columns[: len(MRMC_COLUMNS)]) == list(MRMC_COLUMNS)
    assert set(mrmc["modality"]) == {"human", "model:vlm-alpha", "model:vlm-beta"}
    assert len(mrmc) == 5 * 4 and set(mrmc["truth"]) == {"1"}
    assert set(mrmc["param_scoring_spec_version"]) == {"2.0"}
