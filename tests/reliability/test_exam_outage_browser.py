"""PostgreSQL stops while a reader answers: the page keeps the answer, the retry stores it once.

The server is the private throwaway cluster (tests/reliability/pgcluster.py); the
shared test server is never stopped. Real Chromium, real key presses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlmodel import Session, col, select

from reader_app.core.db import migrate
from reader_app.models import Response
from tests.e2e.conftest import artifact, served_env
from tests.e2e.exam_driver import (
    choose_likert,
    expect_case,
    on_screen,
    open_exam,
    progress,
    submit,
    type_diagnosis,
    wait_next_screen,
)
from tests.reliability.exam_server import exam_walk
from tests.reliability.pgcluster import ThrowawayPostgres

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.browser,
    pytest.mark.xdist_group("throwaway_pg"),
]


def test_postgres_down_keeps_the_typed_answer_and_the_retry_stores_once(
    throwaway_pg: ThrowawayPostgres, throwaway_db: str, tmp_path: Path, browser: Any
) -> None:
    migrate(throwaway_db)
    env = served_env(throwaway_db, tmp_path / "d")
    with exam_walk(env, tmp_path / "app.log", browser, n_cases=2) as walk:
        page = walk.page
        open_exam(page, walk.link)
        expect_case(page, 1, 2)
        type_diagnosis(page, "Typed while the server is down")
        choose_likert(page, 2)
        throwaway_pg.stop("immediate")
        try:
            submit(page, "click")
            expect(page.get_by_text("database is not answering")).to_be_visible(timeout=60_000)
            expect_case(page, 1, 2)
            assert on_screen(page) == {
                "diagnosis": "Typed while the server is down",
                "likert": 2,
                "idk": False,
            }
            page.screenshot(path=str(artifact("exam-form-pg-down-1024.png")))
        finally:
            throwaway_pg.start()
        before = progress(page)
        submit(page, "click")  # the retry, once the server is back
        wait_next_screen(page, before)
        expect_case(page, 2, 2)
        with Session(walk.engine) as db:
            rows = db.exec(select(Response).order_by(col(Response.id))).all()
            assert [(r.diagnosis, r.likert) for r in rows] == [
                ("Typed while the server is down", 2)
            ]
