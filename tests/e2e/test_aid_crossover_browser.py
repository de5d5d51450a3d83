"""The crossover AI-aided arm in real Chromium, on SQLite and PostgreSQL: period 1 of a
reader, typed with real key presses. An aided case shows the model's answer with the
case and its marker drawn on the image (a dashed ring at the model's point, placed by
the viewer's own image-to-screen mapping); each answer is stored in the arm the page
drew; once period 1 is read the page says when period 2 opens and shows no case."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.models import Response
from tests.e2e.conftest import ServedApp
from tests.e2e.exam_driver import progress, settled, wait_next_screen
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import add_run, crossover

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("aid_browser")]


def _wait_rows(session: Session, reader_id: int | None, n: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        session.expire_all()
        count = len(session.exec(select(Response).where(Response.reader_id == reader_id)).all())
        if count >= n or time.monotonic() > deadline:
            assert count == n, f"{count} stored answers, expected {n}"
            return
        time.sleep(0.1)


def test_crossover_period_one_with_the_model_marker_drawn(
    served: ServedApp, settings: Settings, session: Session, page: Page
) -> None:
    study = make_study(session, settings.asset_dir, slug="cross", n_cases=2, config=crossover(14))
    add_run(session, study)  # the model's point: x 5, y 6 on every case
    invite = make_reader(session, study, "R-cross", ready=True)
    page.goto(sign_in_link(served.url, invite.token))
    drawn: list[bool] = []
    for k in range(2):
        expect(page.get_by_text(re.compile(r"^Period 1 of 2\."))).to_be_visible(timeout=30_000)
        settled(page)
        box = page.locator(".st-key-aid_box")
        aided = box.count() > 0
        ring = page.locator(".rv-model-marker")
        if aided:
            expect(box).to_contain_text("Model says")
            expect(ring).to_be_visible(timeout=10_000)
            # the ring's centre is where the viewer maps the model's image point (5, 6)
            want = page.evaluate("() => window.readerstudyViewer.imageToClient(5, 6)")
            got = ring.bounding_box()
            assert got is not None
            centre = (got["x"] + got["width"] / 2, got["y"] + got["height"] / 2)
            assert abs(centre[0] - want["x"]) <= 1.5 and abs(centre[1] - want["y"]) <= 1.5
        else:
            expect(ring).to_be_hidden()
        drawn.append(aided)
        field = page.get_by_role("textbox", name="Diagnosis", exact=True)
        field.click()
        page.keyboard.type(f"Reading {k}")
        page.keyboard.press("Tab")
        page.locator("[class*='st-key-aid_likert']").get_by_text(re.compile(r"^2 · ")).click()
        before = progress(page)
        page.get_by_role("button", name="Submit answer").click()
        # the answer is stored before the next screen shows (the notice "Saved your answer
        # to case N" lives one page run, which a rerun can end before it is seen)
        _wait_rows(session, invite.reader.id, k + 1)
        if k == 0:
            wait_next_screen(page, before)
    assert sorted(drawn) == [False, True]  # one aided case and one unaided in period 1
    expect(page.get_by_text(re.compile(r"second period opens after the washout"))).to_be_visible()
    expect(page.get_by_role("textbox", name="Diagnosis", exact=True)).to_have_count(0)
    session.expire_all()
    rows = list(
        session.exec(
            select(Response)
            .where(Response.reader_id == invite.reader.id)
            .order_by(col(Response.id))
        )
    )
    assert [(r.arm, r.diagnosis, r.likert) for r in rows] == [
        ("aided" if drawn[k] else "unaided", f"Reading {k}", 2) for k in range(2)
    ]
