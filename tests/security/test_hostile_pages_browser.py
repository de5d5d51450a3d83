"""The real app's pages with hostile stored text, in Chromium: nothing becomes markup.

One study holds hostile text everywhere a person can put it: reader answers
(human and model), the answer key and its synonyms, the clinical history and
the study title. Then, signed in with each role, every page is opened and the
rendered DOM is checked: no injected element, no script ran, nothing fetched
from another host, no exception box; and where a page shows the answer itself
(practice feedback, the adjudication candidate) its visible text equals the
stored text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import AnswerKey, Case, ModelRun, Response, Study
from reader_app.ui.components.safe_text import reveal_controls
from reader_app.ui.navigation import ROLE_PAGES
from tests.e2e.conftest import ServedApp, artifact, start_app, stop_app
from tests.e2e.exam_driver import fill_answer, settled, submit_button
from tests.factories import make_reader, make_study
from tests.security.hostile import INJECTED_SELECTORS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANSWER = (
    '<img src=x onerror="window.__xss=1"> **bold** [link](https://example.invalid/a) '
    "<script>window.__xss=1</script> ![p](https://example.invalid/p.png) "
    "'); DROP TABLE responses; -- ورم normal\u202elamron\u202c 🦴"
)
KEY = "<b>Key</b> [k](https://example.invalid/k) :red[ref]"
SYNONYM = "<i>syn</i> https://example.invalid/s"
HISTORY = "<script>window.__xss=1</script> **history** www.example.invalid"
TITLE = 'Study <img src=x onerror="window.__xss=1"> **title**'
MODEL_REPLY = ("<script>window.__xss=1</script> **model** " * 400)[:10_000]


def _plain(text: str) -> str:
    return " ".join(text.replace("\u2060", "").split())


def _store(url: str, asset_dir: Path) -> dict[str, str]:
    """A hostile study; returns the sign-in tokens by role."""
    engine = make_engine(url)
    tokens: dict[str, str] = {}
    with Session(engine, expire_on_commit=False) as session:
        study = make_study(session, asset_dir, n_cases=2, n_practice=1, slug="hostile")
        study.title = TITLE
        session.add(study)
        for case in session.exec(select(Case).where(Case.study_id == study.id)).all():
            case.history = HISTORY
            session.add(case)
        for key in session.exec(select(AnswerKey)).all():
            key.diagnosis, key.synonyms = KEY, SYNONYM
            session.add(key)
        session.commit()
        # R01 answers the scored cases (the practice case is left for the browser)
        r01 = make_reader(session, study, code="R01", ready=True)
        tokens["reader"] = r01.token
        r02 = make_reader(session, study, code="R02", ready=True).reader
        ensure_order(session=session, reader=r02)
        while (case := next_case(session=session, reader=r02)) is not None:
            submit_answer(
                session=session, reader=r02, case_public_id=case.public_id,
                answer=validate_answer(ANSWER, 3, False), shown_at=None,
                image_sha256=case.image_sha256,
            )  # fmt: skip
        run = ModelRun(study_id=study.id, name="<b>run</b>", model="<i>m</i>", source="import")
        session.add(run)
        session.flush()
        for case in session.exec(select(Case).where(Case.study_id == study.id)).all():
            session.add(
                Response(study_id=study.id, case_id=case.id, model_run_id=run.id,
                         diagnosis=MODEL_REPLY, raw_reply=MODEL_REPLY, status="answered",
                         practice=case.practice)
            )  # fmt: skip
        session.commit()
        for role in ("coordinator", "adjudicator", "analyst"):
            tokens[role] = make_reader(session, study, code=f"{role[:2].upper()}1", role=role).token
        assert session.get(Study, study.id) is not None
    engine.dispose()
    return tokens


@pytest.fixture
def hostile_app(
    app_env: dict[str, str], tmp_path: Path
) -> Iterator[tuple[ServedApp, dict[str, str]]]:
    tokens = _store(
        app_env["READERSTUDY_DATABASE_URL"], Path(app_env["READERSTUDY_DATA_DIR"]) / "assets"
    )
    app = start_app(app_env, tmp_path / "app.log")
    yield app, tokens
    stop_app(app)


@pytest.fixture
def watched(page: Page) -> Iterator[tuple[Page, list[str]]]:
    foreign: list[str] = []

    def note(request: object) -> None:
        url = request.url  # type: ignore[attr-defined]
        if url.startswith("http") and urlparse(url).hostname not in ("127.0.0.1", "localhost"):
            foreign.append(url)

    page.on("request", note)
    yield page, foreign


def _assert_clean(page: Page, foreign: list[str], where: str) -> None:
    page.wait_for_timeout(300)  # let injected images or handlers fire, if there were any
    assert page.evaluate("window.__xss") is None, f"{where}: injected script ran"
    main = "[data-testid='stMain']"
    found = {s: page.locator(f"{main} {s}").count() for s in INJECTED_SELECTORS}
    # the page has no inline script of its own (the case panel is a component): any
    # inline script is injected
    found = {s: n for s, n in found.items() if n}
    assert found == {}, f"{where}: injected elements {found}"
    for tag in ("b", "i"):  # the hostile <b>/<i> never become elements
        assert page.locator(f"{main} {tag}").count() == 0, f"{where}: <{tag}> injected"
    assert foreign == [], f"{where}: fetched from other hosts: {foreign}"
    assert page.locator("[data-testid='stException']").count() == 0, f"{where}: exception"


def test_reader_pages_show_hostile_text_literally(
    hostile_app: tuple[ServedApp, dict[str, str]], watched: tuple[Page, list[str]]
) -> None:
    app, tokens = hostile_app
    page, foreign = watched
    page.goto(f"{app.url}/?token={tokens['reader']}")
    expect(submit_button(page)).to_be_visible(timeout=30_000)
    settled(page)
    _assert_clean(page, foreign, "exam page")
    # the case panel's text (history, form) is in its shadow root, which inner_text of
    # the page does not include: read both
    body = _plain(
        page.locator("[data-testid='stMain']").inner_text()
        + " "
        + page.locator("[data-case]").first.inner_text()
    )
    assert _plain(HISTORY) in body  # the history, as typed
    assert "<img src=x" in body  # the title's markup shown as text

    fill_answer(page, ANSWER, 2)
    submit_button(page).click()
    expect(page.locator(".st-key-continue")).to_be_visible(timeout=20_000)
    settled(page)
    page.screenshot(path=str(artifact("hostile-practice-feedback.png")))
    _assert_clean(page, foreign, "practice feedback")
    body = _plain(page.locator("[data-testid='stMain']").inner_text())
    assert _plain(ANSWER) in body, "the reader's own answer is not shown as typed"
    assert _plain(KEY) in body and _plain(SYNONYM) in body


def _role_paths(role: str) -> list[tuple[str, str]]:
    """(file, URL path) of each page of a role; the first is the default page, at /."""
    specs = ROLE_PAGES.get(role, ())
    return [(spec.file, "" if i == 0 else spec.url_path) for i, spec in enumerate(specs)]


@pytest.mark.parametrize("role", ["coordinator", "adjudicator", "analyst"])
def test_staff_pages_show_hostile_text_literally(
    hostile_app: tuple[ServedApp, dict[str, str]], watched: tuple[Page, list[str]], role: str
) -> None:
    app, tokens = hostile_app
    page, foreign = watched
    paths = _role_paths(role)
    assert paths, f"no pages for {role}"
    for file, path in paths:
        page.goto(f"{app.url}/{path}?token={tokens[role]}")
        page.locator("[data-testid='stMain']").wait_for()
        settled(page)
        page.wait_for_timeout(1_000)
        settled(page)
        _assert_clean(page, foreign, f"{role} /{path}")
        assert page.get_by_text("Page not found").count() == 0, f"/{path} is not a page"
        if file == "adjudicate.py":
            # the adjudicator must see the hostile answer itself, as typed
            candidate = page.locator(".st-key-adj_candidate")
            expect(candidate).to_be_visible(timeout=30_000)
            settled(page)
            _assert_clean(page, foreign, "adjudication item")
            shown = _plain(candidate.inner_text())
            # as typed, or with the invisible direction overrides made visible (<U+202E>)
            expected = {_plain(t) for t in (ANSWER, MODEL_REPLY)}
            expected |= {_plain(reveal_controls(t) or "") for t in (ANSWER, MODEL_REPLY)}
            assert shown in expected, f"candidate: {shown[:200]!r}"
            page.screenshot(path=str(artifact("hostile-adjudication.png")))
