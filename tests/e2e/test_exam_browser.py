"""The reader's exam in real Chromium (Playwright), against one served app per module.

A reader signs in from a link, consents, fills the profile, does practice,
answers a spot case and a strip case (one with "I don't know"), reloads and
signs out mid-exam and resumes at the right case; a double-clicked submit
makes one row; a revoked (or rotated) link is refused; a second reader gets a
different order. The journey also records every websocket frame and the page
HTML and searches them for answer keys, reference regions and masks (grounding
on), source file names and PHI.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, WebSocket, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from reader_app.core.auth import invite_reader, revoke_invite, sign_in_link
from reader_app.core.db import make_engine
from reader_app.core.settings import Settings, load_settings
from reader_app.exam.order import ensure_order, stored_order
from reader_app.models import Reader, Response, Study
from tests.conftest import fresh_sqlite_url
from tests.e2e.conftest import ServedApp, artifact, served_env, start_app, stop_app
from tests.e2e.exam_driver import (
    accept_consent,
    answer,
    answer_idk,
    choose_window,
    continue_after_feedback,
    diagnosis_box,
    expect_case,
    expect_progress,
    fill_answer,
    fill_profile,
    is_strip,
    open_exam,
    progress,
    step_slices,
    submit_button,
)
from tests.factories import make_reader, make_study
from tests.support.grounding_truth import (
    SPOT_REGION,
    STRIP_REGION,
    STRIP_REGIONS,
    spot_mask,
    study_case_ids,
    truth_needles,
)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("exam_browser")]

PRACTICE_KEY = "Practice reference Kerley B lines"
SCORED_KEYS = [
    "Sarcoidosis stage II",
    "Ewing sarcoma of the femur",
    "Tension pneumothorax right",
    "Pott disease T11",
]
SOURCE_FILES = [
    "practice/KERLEY_0001.dcm",
    "DOE_JOHN_19570312/chest_ct_series7",
    "MRN-4471123_ewing_femur.dcm",
    "st_marys_hospital/ptx_right.png",
    "CT_SMITH_ANNA_series3",
]
PHI = ["DOE_JOHN", "19570312", "4471123", "Dr. Alice Reviewer", "st_marys_hospital", "SMITH_ANNA"]


@dataclass
class ExamServer:
    app: ServedApp
    settings: Settings
    engine: Engine


@pytest.fixture(scope="module")
def exam_server(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ExamServer]:
    """One app for the module (SQLite; the services' PostgreSQL behaviour is tested apart)."""
    root = tmp_path_factory.mktemp("exam_browser")
    env = served_env(fresh_sqlite_url(sqlite_template, root), root / "data")
    settings = load_settings(env)
    server = ExamServer(
        start_app(env, root / "app.log"), settings, make_engine(settings.database_url)
    )
    yield server
    stop_app(server.app)  # the restart test replaces the app: stop the one running now
    server.engine.dispose()


@pytest.fixture
def db(exam_server: ExamServer) -> Iterator[Session]:
    with Session(exam_server.engine, expire_on_commit=False) as s:
        yield s


def _slug() -> str:
    return "s" + uuid.uuid4().hex[:10]


def _rows(db: Session, reader: Reader) -> list[Response]:
    db.expire_all()
    return list(
        db.exec(select(Response).where(Response.reader_id == reader.id).order_by(col(Response.id)))
    )


class FrameLog:
    """Every websocket frame the browser received, plus page HTML snapshots."""

    def __init__(self, page: Page) -> None:
        self.chunks: list[bytes] = []
        page.on("websocket", self._watch)

    def _watch(self, ws: WebSocket) -> None:
        ws.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        self.chunks.append(payload if isinstance(payload, bytes) else payload.encode())

    def snapshot(self, page: Page) -> None:
        self.chunks.append(page.content().encode())
        self.chunks.append(page.url.encode())

    def find(self, needles: list[str]) -> list[str]:
        blob = b"\n".join(self.chunks).lower()
        return [n for n in needles if n.lower().encode() in blob]


def test_reader_journey_practice_spot_strip_reload_resume_and_no_leaks(
    exam_server: ExamServer, page: Page, db: Session
) -> None:
    study = make_study(
        db,
        exam_server.settings.asset_dir,
        slug=_slug(),
        n_cases=4,  # two strips and two spots: both kinds are met within three cases
        n_practice=1,
        strip_every=2,
        strip_slices=16,
        windows=("lung", "mediastinum", "bone"),
        montage=True,
        phantom=True,
        source_ids=SOURCE_FILES,
        diagnoses=[PRACTICE_KEY, *SCORED_KEYS],
        reviewed_by="Dr. Alice Reviewer",
        config={
            "consent": "Your answers are used for research.",
            "practice_count": 1,
            "grounding": True,
            "grounding_required": False,  # this journey answers without a marker
        },
        # practice, strip, spot, strip, spot: ground truth on every scored case
        reference_regions=[None, STRIP_REGION, SPOT_REGION, STRIP_REGIONS, None],
        reference_masks=[None, None, None, None, spot_mask(256, 256)],
    )
    assert study.id is not None
    truth = truth_needles(db, study_case_ids(db, study.id))
    invite = make_reader(db, study, "R-journey")
    link = sign_in_link(exam_server.app.url, invite.token)
    frames = FrameLog(page)

    page.goto(link)
    expect(page.get_by_text("used for research")).to_be_visible(timeout=30_000)  # a cold server
    accept_consent(page)
    fill_profile(page, trainee_year=3, years=3)
    expect_progress(page, "Practice 1 of 1")
    frames.snapshot(page)
    assert not frames.find([PRACTICE_KEY])  # the key is not sent before the answer

    answer(page, "Pulmonary oedema", 2)
    expect(page.get_by_text(PRACTICE_KEY)).to_be_visible()  # reference after the answer
    page.screenshot(path=str(artifact("exam-practice-feedback.png")))
    continue_after_feedback(page)
    expect_case(page, 1, 4)

    kinds: list[str] = []
    while {"spot", "strip"} - set(kinds):
        frames.snapshot(page)
        if is_strip(page):
            kinds.append("strip")
            choose_window(page, "Mediastinum")
            step_slices(page, 3)
            expect(page.locator(".rv-label")).to_contain_text("4/16")
            page.screenshot(path=str(artifact("exam-strip-case.png")))
            answer_idk(page)
        else:
            kinds.append("spot")
            answer(page, "Osteosarcoma", 3)
    answered = len(kinds)

    # reload mid-exam: same case number, the draft typed before the reload is back
    expect_case(page, answered + 1, 4)
    fill_answer(page, "typed but not submitted", 1)
    page.reload()
    expect_case(page, answered + 1, 4)
    expect(diagnosis_box(page)).to_have_value("typed but not submitted")
    assert len(_rows(db, db.exec(select(Reader).where(Reader.id == invite.reader.id)).one())) == (
        answered + 1
    )  # practice + the answered cases; the draft is not stored
    # sign out and come back with the same link: still the first unanswered case
    page.locator(".st-key-pause button").click()
    page.locator(".st-key-sign_out button").click()
    expect(page.get_by_text("You are signed out")).to_be_visible()
    assert "token=" not in page.url
    open_exam(page, link)
    expect_case(page, answered + 1, 4)
    while answered < 4:
        answer_idk(page)
        answered += 1
    expect(page.get_by_text("You have finished this exam")).to_be_visible()
    frames.snapshot(page)

    reader = db.exec(select(Reader).where(Reader.id == invite.reader.id)).one()
    rows = _rows(db, reader)
    assert [r.practice for r in rows] == [True, False, False, False, False]
    assert rows[0].diagnosis == "Pulmonary oedema"
    assert [r.case_id for r in rows] == stored_order(session=db, reader=reader)  # in order
    assert all(r.shown_at and r.shown_at <= r.submitted_at for r in rows)
    assert sum(r.idk for r in rows) >= 1 and reader.group_name == "PGY3"
    assert frames.find(["Case 1 of 4", "Clinical history"])  # the search sees the payloads
    leaks = frames.find([*SCORED_KEYS, *truth, *SOURCE_FILES, *PHI])
    assert not leaks, f"served to the reader: {leaks}"


def test_double_clicked_submit_stores_one_row(
    exam_server: ExamServer, page: Page, db: Session
) -> None:
    study = make_study(db, exam_server.settings.asset_dir, slug=_slug(), n_cases=3)
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(exam_server.app.url, invite.token))
    expect_case(page, 1, 3)
    fill_answer(page, "Double clicked", 2)
    submit_button(page).dblclick()
    expect_case(page, 2, 3)
    page.wait_for_timeout(1500)  # let any second request land
    expect_case(page, 2, 3)
    expect(diagnosis_box(page)).to_have_value("")
    rows = _rows(db, invite.reader)
    assert [(r.diagnosis, r.likert) for r in rows] == [("Double clicked", 2)]


def test_revoked_and_rotated_links_are_refused(
    exam_server: ExamServer, page: Page, db: Session
) -> None:
    study = make_study(db, exam_server.settings.asset_dir, slug=_slug(), n_cases=2)
    first = make_reader(db, study, ready=True)
    link = sign_in_link(exam_server.app.url, first.token)
    open_exam(page, link)
    rotated = invite_reader(session=db, study=study, code=first.reader.code)  # re-invite
    db.commit()
    page.reload()
    expect(page.get_by_text("This sign-in link is not valid")).to_be_visible()
    expect(submit_button(page)).to_have_count(0)

    new_link = sign_in_link(exam_server.app.url, rotated.token)
    open_exam(page, new_link)
    reader = db.get(Reader, first.reader.id)
    assert reader is not None
    revoke_invite(session=db, reader=reader, actor="coordinator")
    db.commit()
    page.reload()
    expect(page.get_by_text("has been revoked")).to_be_visible()
    expect(submit_button(page)).to_have_count(0)
    assert _rows(db, reader) == []


def test_a_second_reader_gets_a_different_order(
    exam_server: ExamServer, browser: Browser, db: Session
) -> None:
    study = make_study(db, exam_server.settings.asset_dir, slug=_slug(), n_cases=12)
    readers = [make_reader(db, study, code, ready=True) for code in ("R-A", "R-B")]
    for invite in readers:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20_000)
        open_exam(page, sign_in_link(exam_server.app.url, invite.token))
        answer_idk(page)
        answer(page, "Second answer", 1)
        assert progress(page).startswith("Case 3 of 12")
        context.close()
    orders = [stored_order(session=db, reader=i.reader) for i in readers]
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]
    for invite, order in zip(readers, orders, strict=True):
        # each reader was shown their own order: answers went to their slots 0 and 1
        assert [r.case_id for r in _rows(db, invite.reader)] == order[:2]
        again = ensure_order(session=db, reader=invite.reader)  # stored once, not redrawn
        assert again == 12 and stored_order(session=db, reader=invite.reader) == order
    assert db.exec(select(Study).where(Study.id == study.id)).one().state == "open"


def test_resume_after_a_server_restart(exam_server: ExamServer, page: Page, db: Session) -> None:
    study = make_study(db, exam_server.settings.asset_dir, slug=_slug(), n_cases=3)
    invite = make_reader(db, study, ready=True)
    link = sign_in_link(exam_server.app.url, invite.token)
    open_exam(page, link)
    answer(page, "Before the restart", 3)
    expect_case(page, 2, 3)
    old = exam_server.app
    stop_app(old)
    exam_server.app = start_app(old.env, old.log, port=old.port)  # same address, new process
    page.reload()
    expect_case(page, 2, 3, timeout=30_000)  # a cold server imports everything first
    answer_idk(page)
    expect_case(page, 3, 3)
    assert [r.status for r in _rows(db, invite.reader)] == ["answered", "idk"]
