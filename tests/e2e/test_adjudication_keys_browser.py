"""The adjudicator in real Chromium (issue 29): the exam's viewer for every case, keys
that work straight after typing, undo, and "Reference report" where it is one.

One served app, one walk: type a note and decide with N (no click in between),
undo with U (the DB shows the decision withdrawn and an audit event), decide
again with Y; then the reports queue: a strip case in the viewer (thumbnails,
slice steps), "Reference report", type 33 and press G at once. After each step
the database holds exactly what the page showed. Screenshots at 1440x900 and
1024x768, and every text on the page at WCAG AA against its real background.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.grading.rubric_grades import rubric_frame
from reader_app.models import Adjudication, AuditEvent, CaseReport, Verdict
from reader_app.study.casebank import RenderedImage, add_case
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.contrast import low_contrast_texts
from tests.e2e.exam_driver import settled, slice_number, viewer_ready
from tests.factories import make_reader, png_bytes
from tests.reader_app.grading.helpers import answer, case_by_source, make_key_study, reader

pytestmark = pytest.mark.browser

CONFIG = {"report_fields": ["findings", "impression"]}
SIZES = ((1440, 900), (1024, 768))


def _waiting(page: Page, n: int) -> None:
    value = page.locator('.st-key-adj_queue_size [data-testid="stMetricValue"]')
    expect(value).to_have_text(str(n), timeout=15_000)


def _expect_flash(page: Page, text: str) -> None:
    """The flash message (escaped for markdown: word joiners before '.' and ':')."""
    alerts = page.locator('[data-testid="stAlert"]')
    expect(alerts.first).to_be_visible(timeout=15_000)
    page.wait_for_function(
        """t => [...document.querySelectorAll('[data-testid="stAlert"]')]
             .some(a => a.innerText.replaceAll('\u2060', '').includes(t))""",
        arg=text,
    )


def _adjudicator_verdicts(session: Session) -> list[tuple[str, int, str | None]]:
    session.expire_all()
    live = select(Verdict).where(col(Verdict.active).is_(True), Verdict.source == "adjudicator")
    return sorted((v.normalized_answer, v.correct, v.note) for v in session.exec(live).all())


def _shots_and_contrast(page: Page, name: str) -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settled(page)
        viewer_ready(page)
        page.screenshot(path=str(artifact(f"{name}-{width}x{height}.png")))
    page.set_viewport_size({"width": 1440, "height": 900})
    main = page.locator('[data-testid="stMain"]')
    failures = low_contrast_texts(main) + low_contrast_texts(page.locator(".gk"))
    assert not failures, failures


def test_adjudicator_viewer_keys_undo_and_reference_report(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir, config=CONFIG)
    slices = [
        RenderedImage(
            png=png_bytes(96, 96, shade=30 + 12 * i),
            width=96,
            height=96,
            label=f"{i + 1}/6",
            window="lung",
            role="slice",
        )
        for i in range(6)
    ]
    strip = add_case(
        session=session,
        asset_dir=settings.asset_dir,
        study=study,
        source_id="ct-strip",
        kind="strip",
        images=slices,
        diagnosis="Right lower lobe pneumonia",
        position=9,
    )
    session.add(
        CaseReport(
            case_id=strip.id or 0,
            answer="report",
            reference_findings="Consolidation in the right lower lobe.",
            reference_impression="Right lower lobe pneumonia.",
        )
    )
    session.commit()
    r07 = reader(session, study, "R07", group="PGY3")
    chest = case_by_source(session, study, "chest-02")
    answer(session, study, chest, "Pectus carinatum", by=r07)
    answer(
        session,
        study,
        strip,
        "Right lower lobe pneumonia",  # the key grades it: only the report waits
        by=r07,
        findings="RLL consolidation.",
        impression="Pneumonia.",
    )
    token = make_reader(session, study, code="A01", role="adjudicator").token

    page.goto(sign_in_link(served.url, token))
    decide_n = page.get_by_role("button", name="Incorrect", exact=True)
    expect(decide_n).to_be_visible(timeout=30_000)
    _waiting(page, 1)
    viewer_ready(page)  # the exam's viewer: zoom, windows, fullscreen
    expect(page.get_by_role("button", name="Zoom in (+)")).to_be_visible()
    _shots_and_contrast(page, "adjudication-diagnosis")

    # type a note and decide with N straight away: Enter leaves the note, N decides
    note = page.get_by_label("Note (optional)")
    note.click()
    page.keyboard.type("different entity, not in the key")
    page.keyboard.press("Enter")
    page.keyboard.press("n")
    _waiting(page, 0)
    _expect_flash(page, "Saved: incorrect.")
    assert _adjudicator_verdicts(session) == [
        ("pectus carinatum", 0, "different entity, not in the key")
    ]

    # undo with U: the decision is withdrawn (kept as history) and audited
    page.keyboard.press("u")
    _expect_flash(page, "Undone: your decision (incorrect)")
    _waiting(page, 1)
    assert _adjudicator_verdicts(session) == []
    decisions = session.exec(select(Adjudication)).all()
    assert [(d.correct, d.active) for d in decisions] == [(0, False)]
    (event,) = session.exec(select(AuditEvent).where(AuditEvent.action == "adjudication.undo"))
    assert json.loads(event.detail_json)["correct"] in (0, False)
    expect(page.get_by_label("Note (optional)")).to_have_value("")  # a fresh decision

    # decide again, Y, with the focus nowhere in particular
    page.keyboard.press("y")
    _waiting(page, 0)
    assert _adjudicator_verdicts(session) == [("pectus carinatum", 1, None)]

    # the reports queue: a strip in the viewer and the reference labelled as a report
    page.get_by_text("Reports", exact=True).click()
    grade = page.get_by_label("Grade (0-40)")
    expect(grade).to_be_visible(timeout=15_000)
    viewer_ready(page)
    expect(page.locator(".rv-thumbs button")).to_have_count(6)
    before = slice_number(page)
    page.keyboard.press("ArrowDown")  # stack scrolling, the focus on the page
    page.wait_for_function("n => window.readerstudyViewer.state().slice === n", arg=before + 1)
    reference = page.locator(".st-key-rubric_reference")
    expect(reference).to_contain_text("Consolidation in the right lower lobe.")
    expect(page.get_by_text("Reference report", exact=True)).to_be_visible()
    expect(page.get_by_text("Reference diagnosis", exact=True)).to_have_count(0)
    _shots_and_contrast(page, "adjudication-report")

    # type the grade and press G at once: no click away
    grade.click()
    page.keyboard.type("33")
    page.keyboard.press("g")
    _expect_flash(page, "Saved: 33 / 40.")
    session.expire_all()
    assert rubric_frame(session=session, study_id=study.id or 0)["rubric"].tolist() == [33]
