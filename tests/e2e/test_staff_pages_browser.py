"""The coordinator's pages in real Chromium (issue 29), one served app, one walk:

- the case bank shows a preview per case (the stored PNGs, no file name);
- the Invites page shows where a reader's profile answer differs from the invite's
  group, and a list with bad lines is refused whole, every bad line named at once;
- New study offers the manifest template, whose header is the fixed contract;
- the study's name is in the sidebar of every page, and a coordinator of two
  studies switches between them (a pasted staff link, then the switcher).

Screenshots at 1440x900 and 1024x768 of the case bank and the invites page, and
every text of them at WCAG AA against its real background.

The second walk (issue 42) opens every staff page (Progress, Leaderboard, Per-case
matrix, Charts, Model runs, Exports, Report, Answer key, Invites, Case bank,
Adjudication) at both sizes: every text at AA against its real background, no metric
label cut, no chart past the column, the Progress table without sideways scroll, a
screenshot of the screen and of the whole page (test-artifacts/).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.exam.profile import save_profile, validate_profile
from reader_app.ingest.manifest import COLUMNS
from reader_app.models import Reader
from tests.e2e import matrix_cells
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.contrast import low_contrast_texts
from tests.e2e.exam_driver import settled
from tests.factories import make_reader, make_study

pytestmark = pytest.mark.browser
WAIT = 30_000
SIZES = ((1440, 900), (1024, 768))


@pytest.fixture
def db_url(sqlite_url: str) -> str:
    return sqlite_url  # the pages' logic runs on both databases in tests/reader_app


def _sidebar_study(page: Page, slug: str) -> None:
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text(f"({slug})", timeout=WAIT)


def _open(page: Page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible(timeout=WAIT)
    settled(page)


def _shots_and_contrast(page: Page, name: str) -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settled(page)
        page.screenshot(path=str(artifact(f"{name}-{width}x{height}.png")), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    failures = low_contrast_texts(page.locator('[data-testid="stMain"]'))
    failures += low_contrast_texts(page.locator('[data-testid="stSidebar"]'))
    assert not failures, failures


def test_case_previews_group_difference_template_and_study_switcher(
    served: ServedApp, page: Page, session: Session, settings: Settings, tmp_path: Path
) -> None:
    first = make_study(session, settings.asset_dir, n_cases=3, slug="chest-a")
    second = make_study(session, settings.asset_dir, n_cases=1, slug="spine-b")
    token_a = make_reader(session, first, code="C01", role="coordinator").token
    token_b = make_reader(session, second, code="C01", role="coordinator").token
    w01 = make_reader(session, first, code="W01", group="PGY4").reader
    save_profile(
        session=session, reader=w01, profile=validate_profile("board-certified", None, 9, "")
    )

    page.goto(sign_in_link(served.url, token_a))
    _sidebar_study(page, "chest-a")

    # case bank: one preview per case, served as a media PNG (no file name, no id)
    _open(page, "Case bank")
    _sidebar_study(page, "chest-a")
    cards = page.locator('[class*="st-key-cb_case_"]')
    expect(cards).to_have_count(3)
    for i in range(3):
        img = cards.nth(i).locator("img")
        expect(img).to_be_visible()
        assert img.evaluate("i => i.naturalWidth") > 0
        assert "/media/" in (img.get_attribute("src") or "")
    _shots_and_contrast(page, "case-bank")

    # invites: the profile's answer beside the invite's group, said in words
    _open(page, "Invites")
    _sidebar_study(page, "chest-a")
    differences = page.locator(".st-key-inv_group_differences")
    expect(differences).to_contain_text("W01: invited as PGY4, profile says board-certified")
    # a list with bad lines: every bad line named at once, nobody invited
    box = page.get_by_label("One person per line", exact=False)
    box.click()
    box.press_sequentially("R01,PGY2", delay=10)
    box.press("Enter")
    box.press_sequentially("R02,PGY1,not-mail", delay=10)
    box.press("Enter")
    box.press_sequentially("C01", delay=10)
    box.press("Tab")  # Streamlit's text area sends its value on blur
    page.get_by_role("button", name="Create links").click()
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="need fixing")
    expect(alert).to_be_visible(timeout=WAIT)
    text = alert.inner_text().replace("\u2060", "")
    assert "2 line(s) of the list need fixing; no link was created." in text
    assert "line 2: 'not-mail' is not an email address" in text
    assert "line 3: 'C01' is you" in text
    session.expire_all()
    assert session.exec(select(Reader).where(Reader.code.in_(["R01", "R02"]))).all() == []
    _shots_and_contrast(page, "invites")

    # new study: the manifest template has the contract's header
    _open(page, "New study")
    with page.expect_download() as download:
        page.get_by_role("button", name="Manifest template (CSV)").click()
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == COLUMNS and len(rows) == 3
    with page.expect_download() as toml:
        page.get_by_role("button", name="study.toml example").click()
    assert "[grading]" in Path(toml.value.path()).read_text(encoding="utf-8")

    # the switcher: paste the other study's staff link, then switch back
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Another study", exact=True).click()
    link = sidebar.get_by_label("Paste your staff link for another study")
    link.click()
    link.press_sequentially(sign_in_link(served.url, token_b), delay=2)
    link.press("Enter")  # Streamlit's text input sends its value on Enter
    settled(page)
    sidebar.get_by_role("button", name="Add and switch").click()
    _sidebar_study(page, "spine-b")
    expect(page).to_have_url(re.compile(rf"\?token={re.escape(token_b)}$"), timeout=WAIT)
    switch = sidebar.get_by_label("Switch study")
    expect(switch).to_be_visible(timeout=WAIT)
    switch.click()
    page.get_by_role("option", name="chest-a", exact=False).click()
    _sidebar_study(page, "chest-a")
    _open(page, "Case bank")
    expect(page.locator('[class*="st-key-cb_case_"]')).to_have_count(3)


_CUT_LABELS_JS = """
() => [...document.querySelectorAll('[data-testid="stMetricLabel"]')].flatMap(label =>
  [label, ...label.querySelectorAll('*')]
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => label.innerText.trim()))
"""


# charts whose right edge runs past the main column's content box (their legend was cut)
_CHARTS_PAST_THE_COLUMN_JS = """
() => {
  const box = document.querySelector('[data-testid="stMainBlockContainer"]');
  const right = box.getBoundingClientRect().right - parseFloat(getComputedStyle(box).paddingRight);
  return [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .map(e => e.getBoundingClientRect().right - right).filter(over => over > 1);
}
"""
# how far the table's grid scrolls sideways (0 when every column fits)
_SIDEWAYS_JS = """
table => Math.max(0, ...[...table.querySelectorAll('.dvn-scroller')]
  .map(e => e.scrollWidth - e.clientWidth))
"""


# the analyst pages' tabs past the first, each drawn only when open
OTHER_TABS = {
    "per-case": ("Case lists", "Where responders looked"),
    "charts": ("Reliability", "Risk-coverage", "Reader groups", "Reading time"),
}


def _click_a_glyph_cell(page: Page) -> None:
    """A click on a matrix cell's centre, where its glyph (check, cross) is drawn, opens
    that case: the one the cell's tooltip names."""
    for row in range(3):
        for col in range(4):
            tip = matrix_cells.hover(page, row, col)
            if tip["outcome"] in ("correct", "wrong"):
                page.mouse.click(*matrix_cells.cell_centre(page, row, col))
                expect(page.locator(".st-key-pc_case")).to_contain_text(
                    f"Case {tip['case_id']}", timeout=WAIT
                )
                return
    raise AssertionError("no correct or wrong cell in the matrix")


def _whole_page_shot(page: Page, name: str, width: int, height: int) -> None:
    """Streamlit scrolls its main area, not the document, so a "full page" shot is one
    screen: this one grows the window to the main area's length, at the same width."""
    length = page.locator('[data-testid="stMain"]').evaluate("e => e.scrollHeight")
    page.set_viewport_size({"width": width, "height": max(height, min(int(length), 6000))})
    settled(page)
    page.screenshot(path=str(artifact(name)))
    page.set_viewport_size({"width": width, "height": height})
    settled(page)


def _contrast_at_both_sizes(page: Page, name: str) -> list[str]:
    """Screenshots at both sizes (test-artifacts/) and every text below AA, at each size."""
    expect(page.get_by_text("Page not found")).to_have_count(0)  # the page itself, measured
    failures: list[str] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settled(page)
        page.screenshot(path=str(artifact(f"{name}-{width}x{height}.png")), full_page=True)
        _whole_page_shot(page, f"{name}-{width}x{height}-whole.png", width, height)
        for part in ("stMain", "stSidebar"):
            found = low_contrast_texts(page.locator(f'[data-testid="{part}"]'))
            failures += [f"{name} {width}x{height} {part}: {f}" for f in found]
        if cut := page.evaluate(_CUT_LABELS_JS):
            failures.append(f"{name} {width}x{height}: metric labels cut: {cut}")
        if past := page.evaluate(_CHARTS_PAST_THE_COLUMN_JS):
            failures.append(f"{name} {width}x{height}: charts past the column by {past} px")
    return failures


def test_progress_metrics_fit_1024_and_staff_texts_are_aa_at_both_sizes(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    """Issue 42: at 1024x768 "Imported, no sign-in" was cut to "Import..."; the analyst's
    active tab "Diagnosis" was 3.1:1 and the sidebar slider's value 2.65:1 (AA: 4.5:1)."""
    from tests.reader_app.analysis.scenario import (
        grade_everything,
        import_model_run,
        plan_for,
        simulate_reader,
    )

    cases = ["case-000", "case-001", "case-002", "case-003"]
    study = make_study(session, settings.asset_dir, n_cases=4, slug="aa-study")
    simulate_reader(session, study, "R01", plan_for(cases, "CCwI"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(cases, "CWMC"), group="PGY2")
    import_model_run(session, study, "vlm-a", plan_for(cases, "CCCW"))
    grade_everything(session, study)
    coordinator = make_reader(session, study, code="C01", role="coordinator").token
    analyst = make_reader(session, study, code="AN1", role="analyst").token

    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{served.url}/progress?token={coordinator}")
    expect(page.get_by_role("heading", name="Progress", level=1)).to_be_visible(timeout=WAIT)
    imported = page.get_by_test_id("stMetric").filter(has_text="Imported, no sign-in")
    expect(imported).to_be_visible(timeout=WAIT)
    settled(page)
    assert page.evaluate(_CUT_LABELS_JS) == []  # no metric label is cut with an ellipsis
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible(timeout=WAIT)
    # the readers' table fits the page's width: no sideways scroll at 1024 px
    sideways = table.evaluate(_SIDEWAYS_JS)
    failures = [f"progress table scrolls {sideways} px sideways at 1024"] if sideways > 1 else []
    failures += _contrast_at_both_sizes(page, "progress")

    page.goto(f"{served.url}/?token={analyst}")  # the leaderboard is the analyst's landing page
    expect(page.get_by_role("heading", name="Leaderboard", level=1)).to_be_visible(timeout=WAIT)
    tab = page.get_by_role("tab", name="Diagnosis")
    expect(tab).to_have_attribute("aria-selected", "true", timeout=WAIT)
    slider_value = page.get_by_test_id("stSliderThumbValue")
    expect(slider_value).to_be_visible(timeout=WAIT)
    settled(page)
    failures += _contrast_at_both_sizes(page, "leaderboard")
    for title, name in (
        ("Per-case matrix", "per-case"),
        ("Charts", "charts"),
        ("Model runs", "model-runs"),
        ("Exports", "exports"),
        ("Report", "report"),
    ):
        page.goto(f"{served.url}/{name}?token={analyst}")  # a staff link to the page
        expect(page.get_by_role("heading", name=title, level=1)).to_be_visible(timeout=WAIT)
        settled(page)
        failures += _contrast_at_both_sizes(page, name)
        if name == "per-case":
            _click_a_glyph_cell(page)
        for tab in OTHER_TABS.get(name, ()):  # drawn one at a time: each looked at
            page.get_by_role("tab", name=tab, exact=True).click()
            expect(page.get_by_role("tab", name=tab, exact=True)).to_have_attribute(
                "aria-selected", "true", timeout=WAIT
            )
            settled(page)
            failures += _contrast_at_both_sizes(page, f"{name}-{tab.lower().replace(' ', '-')}")
    # the coordinator's landing page is the answer key, served at "/" (Streamlit answers
    # its own address, /answer-key, with "Page not found")
    for title, name in (("Answer key", ""), ("Invites", "invites"), ("Case bank", "case-bank")):
        page.goto(f"{served.url}/{name}?token={coordinator}")
        expect(page.get_by_role("heading", name=title, level=1)).to_be_visible(timeout=WAIT)
        settled(page)
        failures += _contrast_at_both_sizes(page, name or "answer-key")
        if name == "invites":  # the people table fits at 1024 px too
            sideways = page.get_by_test_id("stDataFrame").last.evaluate(_SIDEWAYS_JS)
            if sideways > 1:
                failures.append(f"invites table scrolls {sideways} px sideways at 1024")

    # the adjudicator's page with an answer waiting for a decision
    simulate_reader(session, study, "R03", plan_for(cases, "WWWW"), group="PGY2")
    adjudicator = make_reader(session, study, code="ADJ2", role="adjudicator").token
    page.goto(f"{served.url}/?token={adjudicator}")  # the adjudicator's one page
    expect(page.get_by_role("heading", name="Adjudication", level=1)).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("button", name="Correct", exact=True)).to_be_visible(timeout=WAIT)
    settled(page)
    failures += _contrast_at_both_sizes(page, "adjudication")
    assert not failures, failures
