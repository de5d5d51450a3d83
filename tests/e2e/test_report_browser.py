"""Report-mode cases in real Chromium, on SQLite and PostgreSQL.

A reader writes Findings + Impression on 16-slice strip cases with real key
presses, reloads and pauses mid-report (the draft comes back from the tab),
submits with the button and with Ctrl+Enter from inside a text box (no blur),
ticks "I don't know" once, answers the last case confidence-first, and after
every step the database holds exactly what the page showed: nothing before a
submit, one row equal to the form after it.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.models import Case, CaseReport, Reader, Response
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import (
    choose_likert,
    diagnosis_box,
    expect_case,
    expect_focus,
    idk_box,
    is_strip,
    likert_choice,
    settled,
    submit,
    text_box,
)
from tests.factories import make_reader, make_study

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("report_browser")]

REFERENCE_FINDINGS = "SECRET-REF spiculated mass in the left lower lobe, 31 mm."
REFERENCE_IMPRESSION = "SECRET-REF left lower lobe carcinoma"
FINDINGS_1 = "Right upper lobe spiculated nodule, 18 mm.\nNo pleural effusion."
IMPRESSION_1 = "Primary lung cancer, right upper lobe (T1c)."
IMPRESSION_3 = "Bilateral ground-glass; consider organising pneumonia."
FINDINGS_3 = "Patchy peripheral ground-glass, both lower lobes."


def _report_study(session: Session, settings: Settings) -> tuple[str, Reader]:
    study = make_study(
        session,
        settings.asset_dir,
        slug="bench2",
        n_cases=3,
        strip_every=1,
        strip_slices=16,
        phantom=True,
        config={"report_fields": ["findings", "impression"], "answer": "report"},
    )
    for case in session.exec(select(Case).where(Case.study_id == study.id)).all():
        assert case.id is not None
        session.add(
            CaseReport(
                case_id=case.id,
                answer="report",
                reference_findings=REFERENCE_FINDINGS,
                reference_impression=REFERENCE_IMPRESSION,
            )
        )
    session.commit()
    invite = make_reader(session, study, "R-report", ready=True)
    return invite.token, invite.reader


def _rows(session: Session, reader: Reader) -> list[Response]:
    session.expire_all()
    return list(
        session.exec(
            select(Response).where(Response.reader_id == reader.id).order_by(col(Response.id))
        )
    )


def _type_into(page: Page, key: str, text: str) -> None:
    """Click into a text area and type with real key presses (no blur afterwards)."""
    text_box(page, key.capitalize()).click()
    page.keyboard.type(text)


def _expect_form(page: Page, findings: str, impression: str) -> None:
    expect(text_box(page, "Findings")).to_have_value(findings, timeout=30_000)
    expect(text_box(page, "Impression")).to_have_value(impression)


def _expect_saved_and_next(page: Page, next_text: str) -> None:
    expect(page.get_by_text(next_text).first).to_be_visible(timeout=30_000)
    settled(page)


def test_reader_writes_reports_reloads_pauses_and_resumes(
    served: ServedApp, settings: Settings, session: Session, page: Page
) -> None:
    token, reader = _report_study(session, settings)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(sign_in_link(served.url, token))
    expect(text_box(page, "Findings")).to_be_visible(timeout=30_000)
    expect_case(page, 1, 3, timeout=30_000)
    assert diagnosis_box(page).count() == 0
    expect_focus(page, "findings")  # a report case opens with the focus in Findings
    assert is_strip(page)  # a 16-slice strip in the viewer
    assert "SECRET-REF" not in page.content()

    # case 1: findings, impression, confidence; then reload and pause mid-report
    _type_into(page, "findings", FINDINGS_1)
    _type_into(page, "impression", IMPRESSION_1)
    choose_likert(page, 3)
    page.screenshot(path=str(artifact("report-case-1440x900.png")))
    page.set_viewport_size({"width": 1024, "height": 768})
    page.screenshot(path=str(artifact("report-case-1024x768.png")))
    assert _rows(session, reader) == []  # nothing is stored before a submit

    page.reload()
    expect_case(page, 1, 3, timeout=30_000)
    _expect_form(page, FINDINGS_1, IMPRESSION_1)  # the tab's draft came back
    expect(likert_choice(page, 3)).to_be_checked()

    page.locator(".st-key-pause button").click()
    page.locator(".st-key-resume button").click()
    _expect_form(page, FINDINGS_1, IMPRESSION_1)
    expect(likert_choice(page, 3)).to_be_checked()
    # one more line typed at the end of the findings, then Ctrl+Enter without leaving it
    text_box(page, "Findings").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nNo adenopathy.")
    findings_1 = FINDINGS_1 + "\nNo adenopathy."
    submit(page, "ctrl+enter")
    _expect_saved_and_next(page, "Case 2 of 3")

    rows = _rows(session, reader)
    assert len(rows) == 1
    first = rows[0]
    assert (first.findings, first.impression, first.likert, first.idk, first.status) == (
        findings_1,
        IMPRESSION_1,
        3,
        False,
        "answered",
    )
    assert first.diagnosis is None
    assert len(first.image_sha256.split(",")) == 16
    assert first.first_shown_at is not None and first.active_ms is not None

    # case 2: start typing, then tick "I don't know"; a reload keeps the tick
    _expect_form(page, "", "")
    _type_into(page, "impression", "Maybe a")
    idk_box(page).click()
    expect(idk_box(page)).to_be_checked()
    page.reload()
    expect_case(page, 2, 3, timeout=30_000)
    expect(idk_box(page)).to_be_checked(timeout=30_000)
    assert len(_rows(session, reader)) == 1
    submit(page, "click")
    _expect_saved_and_next(page, "Case 3 of 3")
    second = _rows(session, reader)[1]
    assert (second.findings, second.impression, second.likert, second.idk, second.status) == (
        None,
        None,
        None,
        True,
        "idk",
    )

    # case 3: an impression alone is refused without a confidence (nothing stored);
    # then confidence first, findings typed last, submitted by a click
    _expect_form(page, "", "")
    _type_into(page, "impression", IMPRESSION_3)
    submit(page, "click")
    expect(page.get_by_text("Choose your confidence")).to_be_visible(timeout=30_000)
    assert len(_rows(session, reader)) == 2
    choose_likert(page, 1)
    _expect_form(page, "", IMPRESSION_3)
    _type_into(page, "findings", FINDINGS_3)
    submit(page, "click")
    _expect_saved_and_next(page, "You have finished this exam")
    rows = _rows(session, reader)
    assert [(r.findings, r.impression, r.likert, r.status) for r in rows[2:]] == [
        (FINDINGS_3, IMPRESSION_3, 1, "answered")
    ]
