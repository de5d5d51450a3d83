"""The app server stops as a reader presses Submit: the page says the answer is not saved,
keeps it through the reconnect to the restarted server, and it is stored once.

Real Chromium and real key presses; the server is our own ``readerstudy serve`` on a
fresh SQLite file, stopped and started again on the same port.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from reader_app.models import Response
from tests.conftest import fresh_sqlite_url
from tests.e2e.conftest import ServedApp, artifact, served_env, start_app, stop_app
from tests.e2e.exam_driver import (
    choose_likert,
    diagnosis_box,
    expect_case,
    open_exam,
    panel_case,
    settled,
    submit,
    submit_button,
    type_diagnosis,
)
from tests.reliability.exam_server import exam_walk

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NOT_SAVED = "Not saved yet: the server could not be reached"
CONNECTING = "[data-testid=stConnectionStatus]"  # Streamlit's "Connecting" while it is down


def _rows(engine: Any) -> list[tuple[str | None, int | None]]:
    with Session(engine) as db:
        rows = db.exec(select(Response).order_by(col(Response.id))).all()
        return [(r.diagnosis, r.likert) for r in rows]


def _restart(app: ServedApp, page: Page, log: Path) -> ServedApp:
    """Start the server again on its port and wait for the page to reconnect (a new
    session) and settle."""
    expect(page.locator(CONNECTING)).to_be_attached()  # Streamlit knows it is down
    app = start_app(app.env, log, port=app.port)
    expect(page.locator(CONNECTING)).to_have_count(0, timeout=60_000)
    settled(page)
    return app


def test_an_answer_sent_as_the_server_stops_is_said_unsaved_then_stored_once(
    sqlite_template: Path, tmp_path: Path, browser: Any
) -> None:
    """Sent by a click, then by Enter on the focused button: each time the panel says the
    answer is not saved, keeps it, and sends it to the restarted server once the page has
    reconnected (asking for a page run there, which names the new session), with no second
    press; each stored once."""
    env = served_env(fresh_sqlite_url(sqlite_template, tmp_path), tmp_path / "d")
    with exam_walk(env, tmp_path / "app.log", browser, n_cases=3) as walk:
        page, engine = walk.page, walk.engine
        open_exam(page, walk.link)
        expect_case(page, 1, 3)
        first = panel_case(page)
        type_diagnosis(page, "Sent as the server stopped")
        choose_likert(page, 3)
        stop_app(walk.app)
        submit(page, "click")
        # neither the exam door nor Streamlit's websocket took it: said, never silent
        expect(page.get_by_text(NOT_SAVED)).to_be_visible(timeout=15_000)
        assert _rows(engine) == []
        assert panel_case(page) == first
        page.screenshot(path=str(artifact("exam-not-saved-1024x768.png")))
        walk.app = _restart(walk.app, page, tmp_path / "app2.log")
        expect(page.get_by_text("Saved your answer to case 1.")).to_be_visible(timeout=30_000)
        expect_case(page, 2, 3)
        expect(page.get_by_text(NOT_SAVED)).to_have_count(0)
        assert _rows(engine) == [("Sent as the server stopped", 3)]

        type_diagnosis(page, "Second case")
        choose_likert(page, 1)
        stop_app(walk.app)
        submit_button(page).focus()
        submit(page, "enter")
        expect(page.get_by_text(NOT_SAVED)).to_be_visible(timeout=15_000)
        # Streamlit makes the page inert while it reconnects: the answer stays as sent
        expect(diagnosis_box(page)).to_have_value("Second case")
        walk.app = _restart(walk.app, page, tmp_path / "app3.log")
        expect(page.get_by_text("Saved your answer to case 2.")).to_be_visible(timeout=30_000)
        expect_case(page, 3, 3)
        assert _rows(engine) == [("Sent as the server stopped", 3), ("Second case", 1)]
