"""The answer on screen is the answer stored, whatever the order of gestures (issue 13).

Real Chromium, real key presses, a served app on SQLite and on PostgreSQL. Each
gesture order answers one case; after every step the test reads the database:
nothing is stored before the submit, and after it exactly one new row holds
what the page showed at the moment of the submit, and the page has moved on.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import APIResponse, Page, Route, WebSocketRoute, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.models import CaseShown, ExamDraft, Reader, Response
from tests.e2e.conftest import Server, artifact, served_on_database
from tests.e2e.exam_driver import (
    PANEL,
    PROGRESS,
    choose_likert,
    choose_window,
    diagnosis_box,
    expect_case,
    expect_focus,
    focused_field,
    idk_box,
    likert_choice,
    on_screen,
    open_exam,
    panel_case,
    progress,
    settled,
    submit,
    toggle_idk,
    type_diagnosis,
    viewer_ready,
    wait_next_screen,
)
from tests.factories import make_reader, make_study

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("exam_form_browser")]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with served_on_database(request, sqlite_template, tmp_path_factory, "exam_form") as served:
        yield served


@pytest.fixture
def db(server: Server) -> Iterator[Session]:
    with Session(server.engine, expire_on_commit=False) as s:
        yield s


def _rows(db: Session, reader: Reader) -> list[Response]:
    db.expire_all()
    return list(
        db.exec(select(Response).where(Response.reader_id == reader.id).order_by(col(Response.id)))
    )


def _stored(row: Response) -> dict[str, object]:
    return {"diagnosis": row.diagnosis or "", "likert": row.likert, "idk": row.idk}


def _expected(shown: dict[str, object]) -> dict[str, object]:
    """What the page promises to store: IDK ticked means "I don't know" and nothing else."""
    if shown["idk"]:
        return {"diagnosis": "", "likert": None, "idk": True}
    return {"diagnosis": str(shown["diagnosis"]).strip(), "likert": shown["likert"], "idk": False}


def type_confidence_submit(page: Page) -> str:
    type_diagnosis(page, "Sarcoidosis stage II")
    choose_likert(page, 3)
    return "click"


def confidence_type_submit_without_blur(page: Page) -> str:
    choose_likert(page, 4)
    type_diagnosis(page, "Ewing sarcoma")
    return "click"  # the cursor is still in the text box


def type_confidence_edit_submit(page: Page) -> str:
    type_diagnosis(page, "Pneumothorax")
    choose_likert(page, 1)
    diagnosis_box(page).click()
    page.keyboard.press("End")
    page.keyboard.type(" right, tension")
    return "click"


def idk_on_off_type_submit(page: Page) -> str:
    toggle_idk(page)
    expect(idk_box(page)).to_be_checked()
    toggle_idk(page)
    expect(idk_box(page)).not_to_be_checked()
    type_diagnosis(page, "Pott disease")
    choose_likert(page, 2)
    return "click"


def keyboard_only(page: Page) -> str:
    # a new case opens with the focus in its first field: type at once
    assert focused_field(page) == "diagnosis"
    page.keyboard.type("Osteoid osteoma")
    page.keyboard.press("Tab")  # -> the confidence group
    assert focused_field(page) == "likert"
    page.keyboard.press("ArrowRight")  # arrows choose a confidence
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Tab")
    assert focused_field(page) == "idk"
    page.keyboard.press("Tab")
    assert focused_field(page) == "submit"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    assert focused_field(page) == "submit"
    return "enter"  # Enter on the focused Submit button


def space_on_the_button(page: Page) -> str:
    type_diagnosis(page, "Space bar answer")
    choose_likert(page, 3)
    page.keyboard.press("Tab")  # confidence group -> I don't know
    page.keyboard.press("Tab")  # -> Submit
    assert focused_field(page) == "submit"
    return "space"


def ctrl_enter_from_the_box(page: Page) -> str:
    choose_likert(page, 0)
    type_diagnosis(page, "Normal study")
    return "ctrl+enter"


def enter_in_the_box(page: Page) -> str:
    choose_likert(page, 2)
    type_diagnosis(page, "Enter key answer")
    return "enter"


def ctrl_enter_from_the_page(page: Page) -> str:
    type_diagnosis(page, "Clicked away")
    choose_likert(page, 1)
    page.locator(PROGRESS).first.click()  # focus outside the form
    return "ctrl+enter"


def type_then_idk(page: Page) -> str:
    type_diagnosis(page, "Not sure at all")
    toggle_idk(page)
    return "click"


def double_click(page: Page) -> str:
    type_diagnosis(page, "Double clicked")
    choose_likert(page, 2)
    return "dblclick"


GESTURES: list[Callable[[Page], str]] = [
    type_confidence_submit,
    confidence_type_submit_without_blur,
    type_confidence_edit_submit,
    idk_on_off_type_submit,
    double_click,
    keyboard_only,
    space_on_the_button,
    ctrl_enter_from_the_box,
    enter_in_the_box,
    ctrl_enter_from_the_page,
    type_then_idk,
]


def test_every_gesture_order_stores_what_the_page_showed(
    server: Server, page: Page, db: Session
) -> None:
    n = len(GESTURES)
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=n)
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    for number, gesture in enumerate(GESTURES, start=1):
        expect_case(page, number, n)
        settled(page)
        # each new case opens with the focus in its first field
        expect_focus(page, "diagnosis")
        for choice in range(5):  # no confidence pre-set
            expect(likert_choice(page, choice)).not_to_be_checked()
        how = gesture(page)
        assert len(_rows(db, invite.reader)) == number - 1, f"{gesture.__name__}: stored early"
        shown = on_screen(page)
        before = progress(page)
        submit(page, how)
        wait_next_screen(page, before)
        rows = _rows(db, invite.reader)
        assert len(rows) == number, f"{gesture.__name__}: {len(rows)} rows after {number} cases"
        assert _stored(rows[-1]) == _expected(shown), gesture.__name__
        assert rows[-1].first_shown_at is not None and rows[-1].active_ms is not None
        if gesture is not double_click:
            expect(page.get_by_text(f"Saved your answer to case {number}.")).to_be_visible()
        else:
            # a second click that reaches the server came from a form drawn for the stored
            # case: it is said ("already saved"), never stored; one the browser merged
            # into the first submit leaves the "Saved" message
            said = re.compile(rf"already saved|Saved your answer to case {number}\.")
            expect(page.get_by_text(said)).to_be_visible(timeout=10_000)
            expect_case(page, number + 1, n)
            assert on_screen(page) == {"diagnosis": "", "likert": None, "idk": False}
    expect(page.get_by_text("You have finished this exam")).to_be_visible()
    assert len(_rows(db, invite.reader)) == n


def test_pause_resume_and_reload_keep_the_draft_and_the_first_shown_time(
    server: Server, page: Page, db: Session
) -> None:
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=2)
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    expect_case(page, 1, 2)
    choose_likert(page, 4)
    type_diagnosis(page, "Draft diagnosis")
    page.locator(".st-key-pause button").click()
    expect(page.locator(".st-key-resume")).to_be_visible()
    page.locator(".st-key-resume button").click()
    expect_case(page, 1, 2)
    expect(diagnosis_box(page)).to_have_value("Draft diagnosis")
    expect(likert_choice(page, 4)).to_be_checked()
    assert on_screen(page) == {"diagnosis": "Draft diagnosis", "likert": 4, "idk": False}
    assert _rows(db, invite.reader) == []

    db.expire_all()
    first = db.exec(select(CaseShown).where(CaseShown.reader_id == invite.reader.id)).one()
    page.wait_for_timeout(1_500)  # the reload must not restart the clock
    page.reload()
    expect_case(page, 1, 2)
    expect(diagnosis_box(page)).to_have_value("Draft diagnosis")
    expect(likert_choice(page, 4)).to_be_checked()
    assert on_screen(page) == {"diagnosis": "Draft diagnosis", "likert": 4, "idk": False}
    page.screenshot(path=str(artifact("exam-form-draft-1440.png")))
    before = progress(page)
    submit(page, "click")
    wait_next_screen(page, before)
    (row,) = _rows(db, invite.reader)
    assert (row.diagnosis, row.likert, row.idk) == ("Draft diagnosis", 4, False)
    assert row.first_shown_at == first.first_shown_at
    assert row.shown_at is not None and row.first_shown_at < row.shown_at  # reload: new session
    assert row.submitted_at is not None
    wall_ms = (row.submitted_at - row.first_shown_at).total_seconds() * 1000
    assert row.active_ms is not None and 0 < row.active_ms <= wall_ms + 5_000
    # the browser's count, kept across the reload: more than this session alone saw
    session_ms = (row.submitted_at - row.shown_at).total_seconds() * 1000
    assert row.active_ms > session_ms + 1_000


def test_database_outage_keeps_the_form_and_a_retry_stores_once(
    server: Server, page: Page, db: Session
) -> None:
    """SQLite: another connection holds the write lock longer than busy_timeout."""
    if not server.settings.database_url.startswith("sqlite"):
        pytest.skip("the write lock is held with SQLite's BEGIN EXCLUSIVE")
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=2)
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    expect_case(page, 1, 2)
    type_diagnosis(page, "Typed during the outage")
    choose_likert(page, 3)
    path = server.settings.database_url.removeprefix("sqlite:///")
    blocker = sqlite3.connect(path, timeout=30, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        submit(page, "click")
        expect(page.get_by_text("database is not answering")).to_be_visible(timeout=60_000)
        expect_case(page, 1, 2)
        assert on_screen(page) == {
            "diagnosis": "Typed during the outage",
            "likert": 3,
            "idk": False,
        }
        page.screenshot(path=str(artifact("exam-form-outage-1024.png")))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert _rows(db, invite.reader) == []
    before = progress(page)
    submit(page, "click")  # the retry
    wait_next_screen(page, before)
    expect_case(page, 2, 2)
    rows = _rows(db, invite.reader)
    assert [(r.diagnosis, r.likert) for r in rows] == [("Typed during the outage", 3)]


def test_another_roles_address_leads_to_ones_own_page_without_page_not_found(
    server: Server, page: Page, db: Session
) -> None:
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=2)
    reader = make_reader(db, study, ready=True)
    analyst = make_reader(db, study, "A01", role="analyst")
    for path in ("analyst", "answer-key", "adjudicate", "consent"):
        page.goto(f"{server.app.url}/{path}?token={reader.token}")
        expect_case(page, 1, 2, timeout=30_000)
        settled(page)
        assert page.get_by_text("Page not found").count() == 0, path
        assert "token=" in page.url  # the sign-in survives the redirect (and a reload)
    page.reload()
    expect_case(page, 1, 2, timeout=30_000)
    page.goto(f"{server.app.url}/exam?token={analyst.token}")
    expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=30_000)
    settled(page)
    assert page.get_by_text("Page not found").count() == 0


# Acts in the very frame that draws the next case's panel: the fastest reader there can
# be (or a busy PC). ``act``: "idk" ticks "I don't know", "likert" picks confidence 0
# only; then the form is submitted.
AT_FIRST_SIGHT = """([before, act, old]) => {
    window.__answeredAt = null;
    const panel = () => {
        for (const host of document.querySelectorAll('*')) {
            const p = host.shadowRoot && host.shadowRoot.querySelector('[data-case]');
            if (p) return p;
        }
        return null;
    };
    const look = () => {
        const bar = document.querySelector('[data-testid=stProgress]');
        const p = panel();
        if (!bar || bar.innerText.trim() === before || !p || p.dataset.case === old) {
            requestAnimationFrame(look);
            return;
        }
        const field = p.querySelector(act === 'idk' ? '[data-field=idk]' : 'input[type=radio]');
        const button = p.querySelector('[data-field=submit]');
        field.click();
        button.click();
        window.__answeredAt = bar.innerText.trim();
    };
    requestAnimationFrame(look);
}"""


def test_an_answer_given_the_instant_a_case_appears_is_for_that_case_alone(
    server: Server, page: Page, db: Session
) -> None:
    """Answer a case, then act on the next one the instant it is drawn. "I don't know" is
    stored for the new case; a confidence alone is refused (no diagnosis): the previous
    case's text, still in the browser's memory of the old form, never comes along."""
    n = 4
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=n)
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    stored: list[dict[str, object]] = []
    for number, act in ((1, "idk"), (3, "likert")):
        expect_case(page, number, n)
        settled(page)
        type_diagnosis(page, f"Answer {number}")
        choose_likert(page, 4)
        before = progress(page)
        page.evaluate(AT_FIRST_SIGHT, [before, act, panel_case(page)])  # armed before the submit
        submit(page, "click")
        answered_at = page.wait_for_function("() => window.__answeredAt").json_value()
        assert answered_at.startswith(f"Case {number + 1} of {n}")
        stored.append({"diagnosis": f"Answer {number}", "likert": 4, "idk": False})
        if act == "idk":
            stored.append({"diagnosis": "", "likert": None, "idk": True})
            expect_case(page, number + 2, n)
        else:
            expect(page.get_by_text("Enter a diagnosis, or choose")).to_be_visible()
            expect_case(page, number + 1, n)
            assert on_screen(page) == {"diagnosis": "", "likert": 0, "idk": False}
        assert [_stored(r) for r in _rows(db, invite.reader)] == stored, f"case {number + 1}"
    type_diagnosis(page, "Typed after the refusal")
    before = progress(page)
    submit(page, "enter")
    wait_next_screen(page, before)
    stored.append({"diagnosis": "Typed after the refusal", "likert": 0, "idk": False})
    assert [_stored(r) for r in _rows(db, invite.reader)] == stored


def test_the_viewer_record_continues_across_a_reload(
    server: Server, page: Page, db: Session
) -> None:
    """Issue 25: a bone window and a zoom before a reload are in the stored record after it
    (the panel keeps the record in the tab), and the typed draft comes back with it."""
    study = make_study(
        db,
        server.settings.asset_dir,
        slug="s" + uuid.uuid4().hex[:10],
        n_cases=1,
        windows=("lung", "bone"),
    )
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    viewer_ready(page)
    choose_window(page, "Bone")
    for _ in range(3):
        page.locator(".rv-tools button[data-act=zoom-in]").click()
    page.wait_for_function("() => window.readerstudyViewer.state().scale > 1.9")
    type_diagnosis(page, "Before the reload")
    page.reload()
    open_exam(page, page.url)
    viewer_ready(page)
    expect(diagnosis_box(page)).to_have_value("Before the reload")
    assert page.evaluate("() => window.readerstudyViewer.state().scale") == 1  # a new view
    choose_likert(page, 2)
    before = progress(page)
    submit(page, "click")
    wait_next_screen(page, before)
    (row,) = _rows(db, invite.reader)
    record = json.loads(row.interaction_json or "null")
    assert record is not None
    assert record["windows_used"][:2] == ["lung", "bone"], record
    assert record["zoom_used"] is True and record["max_zoom"] == 1.95, record


DOOR_ANSWER = "**/_readerstudy/exam/answer"


def test_the_next_case_shows_only_after_the_server_has_stored_the_answer(
    server: Server, page: Page, db: Session
) -> None:
    """Issue 25, commit first: the panel posts its answer to the exam door and holds the
    next case until the reply. The reply is held back here: the row is in the database
    while the answered case is still on screen, and the next case goes up once the reply
    (which names it) arrives."""
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=2)
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    expect_case(page, 1, 2)
    first = panel_case(page)
    held: list[tuple[Route, APIResponse]] = []
    page.route(DOOR_ANSWER, lambda route: held.append((route, route.fetch())))
    type_diagnosis(page, "Stored before it moves on")
    choose_likert(page, 2)
    submit(page, "click")
    for _ in range(200):  # each wait lets the route handler run
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1, "the answer did not go to the exam door"
    route, reply = held[0]
    (row,) = _rows(db, invite.reader)  # durable while the reply is still held
    assert (row.diagnosis, row.likert) == ("Stored before it moves on", 2)
    said = reply.json()
    assert said["stored"] is True and said["shown"] not in (None, first)
    page.wait_for_timeout(700)
    assert panel_case(page) == first, "the next case went up before the server's reply"
    assert on_screen(page)["diagnosis"] == "Stored before it moves on"
    route.fulfill(response=reply)
    expect(page.locator(PANEL).first).to_have_attribute("data-case", said["shown"])
    expect_case(page, 2, 2)
    expect_focus(page, "diagnosis")
    assert on_screen(page) == {"diagnosis": "", "likert": None, "idk": False}
    page.unroute(DOOR_ANSWER)
    assert len(_rows(db, invite.reader)) == 1


def test_a_draft_typed_just_before_the_page_goes_away_is_kept_by_the_server(
    server: Server, page: Page, db: Session
) -> None:
    """Typed, then another address at once (inside the draft's one-second debounce): the
    panel's keepalive request on pagehide reaches the exam door, so the server holds the
    draft, and a new tab on the same sign-in link gets it back."""
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=2)
    invite = make_reader(db, study, ready=True)
    link = sign_in_link(server.app.url, invite.token)
    open_exam(page, link)
    expect_case(page, 1, 2)
    type_diagnosis(page, "Typed as I left")
    choose_likert(page, 1)
    box = diagnosis_box(page)
    box.click()
    page.keyboard.press("End")
    page.keyboard.type(" in a hurry")
    page.goto("about:blank")  # well inside the debounce: only the pagehide report is due
    kept = None
    for _ in range(100):
        db.expire_all()
        kept = db.exec(select(ExamDraft).where(ExamDraft.reader_id == invite.reader.id)).first()
        if kept is not None and kept.diagnosis == "Typed as I left in a hurry":
            break
        page.wait_for_timeout(100)
    assert kept is not None and kept.diagnosis == "Typed as I left in a hurry", kept
    assert kept.likert == 1 and kept.active_ms is not None and kept.active_ms > 0
    browser = page.context.browser
    assert browser is not None
    other = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        fresh = other.new_page()
        open_exam(fresh, link)
        expect_case(fresh, 1, 2)
        expect(diagnosis_box(fresh)).to_have_value("Typed as I left in a hurry")
        expect(likert_choice(fresh, 1)).to_be_checked()
    finally:
        other.close()
    assert _rows(db, invite.reader) == []


STREAM = "**/_stcore/stream"  # Streamlit's websocket


def _script_finished(frames: list[str | bytes]) -> bool:
    """Whether the held server frames hold a whole page run (its ``script_finished``)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    for raw in frames:
        if isinstance(raw, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            if msg.WhichOneof("type") == "script_finished":
                return True
    return False


def test_the_doors_refusal_stays_when_a_page_run_drawn_before_it_arrives_after_it(
    server: Server, page: Page, db: Session
) -> None:
    """Said, never silent, whatever the order of arrival. The panel puts case 2 up on the
    door's reply and asks for a page run; that run is drawn at once but held on its way
    to the browser (the websocket is routed here). The reader picks a confidence and
    submits without a diagnosis: the door refuses, and the refusal shows. Then the held
    run arrives, drawn before that submit: the refusal stays on screen, and the answer
    typed after it is stored once."""
    study = make_study(db, server.settings.asset_dir, slug="s" + uuid.uuid4().hex[:10], n_cases=3)
    invite = make_reader(db, study, ready=True)
    held: list[str | bytes] = []
    holding = [False]
    sockets: list[WebSocketRoute] = []

    def route(ws: WebSocketRoute) -> None:
        upstream = ws.connect_to_server()
        sockets.append(ws)

        def from_server(message: str | bytes) -> None:
            if holding[0]:
                held.append(message)
            else:
                ws.send(message)

        upstream.on_message(from_server)

    page.route_web_socket(STREAM, route)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    expect_case(page, 1, 3)
    first = panel_case(page)
    type_diagnosis(page, "First answer")
    choose_likert(page, 2)
    holding[0] = True
    submit(page, "click")
    expect(page.locator(PANEL).first).not_to_have_attribute("data-case", first)
    for _ in range(400):  # each wait lets the socket's handler run
        if _script_finished(held):
            break
        page.wait_for_timeout(25)
    assert _script_finished(held), "the page run asked for as case 2 went up was not drawn"
    assert progress(page).startswith("Case 1 of 3")  # that run has not reached the page

    choose_likert(page, 3)
    submit(page, "click")
    refused = page.get_by_text("Enter a diagnosis, or choose")
    expect(refused).to_be_visible()
    holding[0] = False
    for message in held:  # the run drawn before the refused submit arrives now
        sockets[-1].send(message)
    held.clear()
    expect_case(page, 2, 3)
    page.wait_for_timeout(300)  # the panel has taken that run's data
    expect(refused).to_be_visible()
    assert on_screen(page) == {"diagnosis": "", "likert": 3, "idk": False}

    type_diagnosis(page, "Typed after the refusal")
    before = progress(page)
    submit(page, "enter")
    wait_next_screen(page, before)
    assert [_stored(r) for r in _rows(db, invite.reader)] == [
        {"diagnosis": "First answer", "likert": 2, "idk": False},
        {"diagnosis": "Typed after the refusal", "likert": 3, "idk": False},
    ]
