"""The sequential AI-aided arm in real Chromium, on SQLite and PostgreSQL.

A reader answers a case on their own with real key presses; the unaided row is
stored before the model's answer appears: every websocket frame the browser
receives is searched for the model's answer, and the moment it first arrives the
database is asked whether the unaided row exists. A reload between the two steps
resumes at the aided step; the final answer is stored as the aided row beside the
unaided one, equal to what the page showed, and the exam moves on.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, WebSocket, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.models import Case, ModelRun, Reader, Response
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import (
    choose_likert,
    expect_case,
    likert_choice,
    settled,
    submit,
    type_diagnosis,
)
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import SEQUENTIAL, add_run

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("aid_browser")]

NEEDLE = b"Model says"  # add_run's answers: "Model says <case id>"


def _rows(session: Session, reader: Reader) -> list[Response]:
    session.expire_all()
    return list(
        session.exec(
            select(Response).where(Response.reader_id == reader.id).order_by(col(Response.id))
        )
    )


class Wire:
    """Every frame the page receives; at the first one carrying the model's answer,
    ``check`` runs (it asks the database) and its result is kept."""

    def __init__(self, page: Page, check: Callable[[], bool]) -> None:
        self.check = check
        self.frames = 0
        self.carrying = 0
        self.row_existed_at_first: bool | None = None
        page.on("websocket", self._on_ws)

    def _on_ws(self, ws: WebSocket) -> None:
        ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload: str | bytes) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        self.frames += 1
        if NEEDLE in data:
            self.carrying += 1
            if self.row_existed_at_first is None:
                self.row_existed_at_first = self.check()


def test_sequential_aided_step(
    served: ServedApp, settings: Settings, session: Session, page: Page
) -> None:
    study = make_study(session, settings.asset_dir, slug="aided", n_cases=2, config=SEQUENTIAL)
    add_run(session, study)
    invite = make_reader(session, study, "R-aid", ready=True)
    reader = invite.reader
    run_id = session.exec(select(ModelRun.id)).one()

    def unaided_stored() -> bool:
        with Session(session.get_bind()) as fresh:
            return (
                fresh.exec(
                    select(Response.id).where(
                        Response.reader_id == reader.id, Response.arm == "unaided"
                    )
                ).first()
                is not None
            )

    wire = Wire(page, unaided_stored)
    page.goto(sign_in_link(served.url, invite.token))
    expect_case(page, 1, 2, timeout=30_000)
    settled(page)
    assert wire.frames > 0 and wire.carrying == 0
    assert "Model says" not in page.content()

    # step 1: the reader's own answer, typed
    type_diagnosis(page, "Pneumothorax")
    choose_likert(page, 2)
    assert _rows(session, reader) == []
    submit(page)

    box = page.locator(".st-key-aid_box")
    expect(box).to_be_visible(timeout=30_000)
    expect(box).to_contain_text("AI model's answer")
    expect(box).to_contain_text("Model says")
    expect(box).to_contain_text("Confidence: 4")
    settled(page)
    rows = _rows(session, reader)
    assert [(r.arm, r.diagnosis, r.likert) for r in rows] == [("unaided", "Pneumothorax", 2)]
    # on the wire: the model's answer first arrived when the unaided row already existed
    assert wire.carrying > 0 and wire.row_existed_at_first is True
    case = session.get(Case, rows[0].case_id)
    assert case is not None
    expect(box).to_contain_text(f"Model says {case.source_id}")
    page.screenshot(path=str(artifact("aid-step.png")))

    # a reload between the steps resumes at the aided step
    page.reload()
    expect(page.locator(".st-key-aid_box")).to_be_visible(timeout=30_000)
    settled(page)
    assert len(_rows(session, reader)) == 1

    # step 2: the final answer (the reader takes the model's), typed
    final = page.get_by_role("textbox", name="Diagnosis", exact=True)
    final.click()
    page.keyboard.type(f"Model says {case.source_id}")
    page.keyboard.press("Tab")
    # a Streamlit radio: the reader clicks the option's label
    page.locator(".st-key-aid_likert").get_by_text(re.compile(r"^4 · ")).click()
    expect(likert_choice(page, 4)).to_be_checked()
    page.get_by_role("button", name="Submit final answer").click()
    expect_case(page, 2, 2, timeout=30_000)
    settled(page)
    rows = _rows(session, reader)
    assert [(r.arm, r.aid_run_id, r.diagnosis, r.likert, r.case_id) for r in rows] == [
        ("unaided", None, "Pneumothorax", 2, case.id),
        ("aided", run_id, f"Model says {case.source_id}", 4, case.id),
    ]
    # the next case starts without the model's answer on screen
    expect(page.locator(".st-key-aid_box")).to_have_count(0)
