"""The walking skeleton on the bundled demo study, in real Chromium, on both databases.

Real pydicom-data images rendered by the ingest pipeline; sign in from the
printed link, answer two scored cases (one "I don't know"), reload, and the
exam resumes at case 3 with exactly two scored responses stored.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import invite_reader, sign_in_link
from reader_app.core.settings import Settings
from reader_app.exam.order import _candidates, draw_order, ensure_order
from reader_app.ingest.demo import ensure_demo_study
from reader_app.models import Case, Response
from reader_app.study.casebank import get_study
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import (
    accept_consent,
    answer,
    answer_idk,
    continue_after_feedback,
    expect_case,
    expect_progress,
    fill_profile,
    settled,
)

pytestmark = pytest.mark.browser


def _scored(session: Session) -> list[Response]:
    session.expire_all()
    return list(
        session.exec(
            select(Response).where(col(Response.practice).is_(False)).order_by(col(Response.id))
        )
    )


def test_demo_exam_answer_idk_reload_resume(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    slug = ensure_demo_study(settings)
    study = get_study(session=session, slug=slug)
    assert study is not None
    invite = invite_reader(session=session, study=study, code="R-demo", group="demo")
    # pick the seed that puts the chest radiograph first, so the screenshot shows a radiograph,
    # and a diagnosis case second (the report-mode case has its own browser test)
    chest = session.exec(select(Case.id).where(Case.source_id == "chest-cr")).one()
    report = session.exec(select(Case.id).where(Case.source_id == "head-ct-report")).one()
    practice, scored = _candidates(session, invite.reader)
    seed = next(
        s
        for s in range(1000)
        if draw_order(practice, scored, s)[len(practice)] == chest
        and draw_order(practice, scored, s)[len(practice) + 1] != report
    )
    ensure_order(session=session, reader=invite.reader, seed=seed)
    session.commit()

    page.goto(sign_in_link(served.url, invite.token))
    accept_consent(page)
    fill_profile(page, years=10)
    expect_progress(page, "Practice 1 of 1")
    answer(page, "Normal thoracic vertebra", 3)
    continue_after_feedback(page)

    total = int(page.locator("[data-testid=stProgress]").first.inner_text().split(" of ")[1])
    expect_case(page, 1, total)
    image = page.locator(".rv-img").first  # the case viewer's image (in its shadow root)
    expect(image).to_be_visible()
    # the image is decoded and real (hundreds of pixels wide), not a placeholder
    assert page.evaluate("(img) => img.complete && img.naturalWidth", image.element_handle()) > 200
    settled(page)
    page.screenshot(path=str(artifact("demo-answer-page.png")))

    answer(page, "Multiple pulmonary metastases", 4)
    expect_case(page, 2, total)
    answer_idk(page)
    expect_case(page, 3, total)

    page.reload()
    expect_case(page, 3, total)
    rows = _scored(session)
    assert len(rows) == 2
    assert [(r.status, r.likert) for r in rows] == [("answered", 4), ("idk", None)]
    assert all(len(r.image_sha256.split(",")[0]) == 64 for r in rows)
