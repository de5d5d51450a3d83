"""The adjudicator grades three reports in a row in real Chromium (issue 38).

The first with G, the second with Enter, the third with a click on "Save grade":
after each, the page holds ONE grading form with an empty Grade box for the next
report, and the database holds exactly one active grade more (the grade typed).
Then Undo (the button, as U would) takes back the last grade: the report is back,
the database holds the first two, the undo is audited.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.models import AuditEvent, RubricGrade
from tests.e2e.conftest import ServedApp
from tests.e2e.exam_driver import settled
from tests.factories import make_reader
from tests.reader_app.grading.helpers import answer, case_by_source, make_key_study, reader

pytestmark = pytest.mark.browser

CONFIG: dict[str, object] = {"report_fields": ["findings", "impression"]}


def _waiting(page: Page, n: int) -> None:
    value = page.locator('.st-key-adj_queue_size [data-testid="stMetricValue"]')
    expect(value).to_have_text(str(n), timeout=15_000)


def _active_scores(session: Session) -> list[int]:
    session.expire_all()
    rows = session.exec(select(RubricGrade).where(col(RubricGrade.active).is_(True))).all()
    return sorted(g.score for g in rows)


def _flash(page: Page, text: str) -> None:
    page.wait_for_function(
        """t => [...document.querySelectorAll('[data-testid="stAlert"]')]
             .some(a => a.innerText.replaceAll('\u2060', '').includes(t))""",
        arg=text,
        timeout=15_000,
    )


def test_three_reports_graded_with_g_enter_and_a_click_then_one_undone(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir, config=CONFIG)
    r07 = reader(session, study, "R07", group="PGY3")
    for source in ("bone-01", "chest-02", "neuro-03"):
        answer(
            session,
            study,
            case_by_source(session, study, source),
            "Something else",
            by=r07,
            findings=f"Findings of {source}.",
            impression="An impression.",
        )
    token = make_reader(session, study, code="A01", role="adjudicator").token
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(sign_in_link(served.url, token))
    expect(page.get_by_text("Reports", exact=True)).to_be_visible(timeout=30_000)
    page.get_by_text("Reports", exact=True).click()
    grade = page.get_by_label("Grade (0-40)")
    saved: list[int] = []
    for n, (score, how) in enumerate([(12, "g"), (25, "enter"), (38, "click")]):
        _waiting(page, 3 - n)
        settled(page)
        expect(grade).to_have_count(1)  # one form, one Grade box, one Save button
        expect(page.get_by_role("button", name="Save grade")).to_have_count(1)
        expect(grade).to_have_value("")  # empty for each new report
        grade.click()
        page.keyboard.type(str(score))
        if how == "g":
            page.keyboard.press("g")
        elif how == "enter":
            page.keyboard.press("Enter")
        else:
            page.get_by_role("button", name="Save grade").click()
        _flash(page, f"Saved: {score} / 40.")
        saved.append(score)
        _waiting(page, 2 - n)
        assert _active_scores(session) == sorted(saved), how  # stored exactly once
    expect(page.get_by_text("No report is waiting for your grade.")).to_be_visible()

    page.get_by_role("button", name="Undo my last grade").click()
    _flash(page, "Undone: your grade (38 / 40). The report is back for your grade.")
    _waiting(page, 1)
    assert _active_scores(session) == [12, 25]
    session.expire_all()
    events = session.exec(select(AuditEvent).where(AuditEvent.action == "rubric.undo")).all()
    assert len(events) == 1
    expect(grade).to_have_count(1)
    expect(grade).to_have_value("")
