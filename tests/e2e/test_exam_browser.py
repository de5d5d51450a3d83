"""The foundation slice in real Chromium: sign in, answer, IDK, reload, resume."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, func, select

from reader_app.auth import sign_in_link
from reader_app.models import Response
from reader_app.settings import Settings
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import answer, answer_idk, expect_case, open_exam
from tests.factories import make_reader, make_study

pytestmark = pytest.mark.browser


def _responses(session: Session) -> int:
    session.expire_all()
    return int(session.exec(select(func.count()).select_from(Response)).one())


def test_answer_two_cases_reload_and_resume(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4)
    invite = make_reader(session, study)
    open_exam(page, sign_in_link(served.url, invite.token))
    expect_case(page, 1, 4)
    expect(page.locator("img").first).to_be_visible()
    page.screenshot(path=str(artifact("exam-case1.png")))

    answer(page, "Pneumothorax", 4)
    expect_case(page, 2, 4)
    answer_idk(page)
    expect_case(page, 3, 4)

    page.reload()
    expect_case(page, 3, 4)
    expect(page.locator(".st-key-diagnosis input")).to_have_value("")
    assert _responses(session) == 2
