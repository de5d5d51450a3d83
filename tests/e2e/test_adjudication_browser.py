"""Blinded adjudication in real Chromium: the page never shows who answered, or what kind.

A reader and a model run give the same wrong answer; the adjudicator sees one
candidate with the case image and the key, decides from the keyboard, and the
verdict reaches both responses. The whole DOM is searched for the responders'
codes, groups, run and model names and kinds.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

from reader_app.core.auth import sign_in_link
from reader_app.core.settings import Settings
from reader_app.results import tidy_responses
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import settled
from tests.factories import make_reader
from tests.reader_app.grading.helpers import (
    answer,
    case_by_source,
    make_key_study,
    model_run,
    reader,
)

pytestmark = pytest.mark.browser

SECRETS = ("R07", "PGY3-secret-group", "frontier-run-42", "frontier-model-x", "OpenAI")


def _expect_waiting(page: Page, n: int) -> None:
    value = page.locator('.st-key-adj_queue_size [data-testid="stMetricValue"]')
    expect(value).to_have_text(str(n), timeout=15_000)


def test_blinded_adjudication_by_keyboard(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    human = reader(session, study, "R07", group="PGY3-secret-group")
    run = model_run(session, study, "frontier-run-42", model="frontier-model-x")
    chest = case_by_source(session, study, "chest-02")
    bone = case_by_source(session, study, "bone-01")
    answer(session, study, chest, "Pectus carinatum", by=human, likert=4)
    answer(session, study, chest, "pectus carinatum", by=run, likert=3)
    answer(session, study, bone, "Melorheostosis", by=run, likert=2)
    answer(session, study, bone, "Osteopoikilosis", by=human)  # the key grades it
    token = make_reader(session, study, code="A01", role="adjudicator").token

    page.goto(sign_in_link(served.url, token))
    expect(page.locator(".st-key-adj_correct")).to_be_visible(timeout=30_000)
    _expect_waiting(page, 2)
    expect(page.locator("img").first).to_be_visible()
    page.screenshot(path=str(artifact("adjudication-item.png")))

    def check_blind() -> str:
        dom = page.content()
        text = page.locator("body").inner_text()
        for secret in SECRETS:
            assert secret not in dom, f"{secret!r} is in the page"
        for word in ("human", "model", "reader", "responder"):
            assert not re.search(rf"\b{word}s?\b", text, re.IGNORECASE), f"{word!r} shown"
        return text

    text = check_blind()
    assert "Pectus excavatum" in text or "Osteopoikilosis" in text  # the reference is shown
    candidate = page.locator(".st-key-adj_candidate").inner_text()
    assert candidate.strip().lower() in ("pectus carinatum", "melorheostosis")

    # decide both items from the keyboard only: N = incorrect
    for remaining in (1, 0):
        page.evaluate("document.activeElement && document.activeElement.blur()")  # no input focused
        page.keyboard.press("n")
        _expect_waiting(page, remaining)
        if remaining:
            settled(page)  # the previous run's elements are replaced, not just marked stale
            shown = page.locator(".st-key-adj_candidate")
            expect(shown).to_have_count(1, timeout=15_000)  # the previous item is gone
            expect(shown).not_to_have_text(candidate)
            check_blind()
    expect(page.get_by_text("No answer is waiting for your decision.")).to_be_visible()

    session.expire_all()
    frame = tidy_responses(session=session, study_id=study.id or 0)
    got = sorted(zip(frame["kind"], frame["diagnosis"], frame["correct"].astype(int), strict=True))
    assert got == [
        ("human", "Osteopoikilosis", 1),
        ("human", "Pectus carinatum", 0),
        ("model", "Melorheostosis", 0),
        ("model", "pectus carinatum", 0),  # one shared verdict with the reader's answer
    ]
