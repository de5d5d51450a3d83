"""Hostile stored text, rendered by Streamlit in real Chromium, stays literal text.

The stand-in dashboard (hostile_dashboard.py) shows every stored answer the way
dashboards must: through reader_app/ui/components/safe_text.py (st.text, a
text-only st.dataframe, escaped markdown in a caption, st.html with escaped
HTML). The test reads the rendered DOM: no element was injected, no script ran,
nothing was fetched from another host, and the visible text equals the stored
text. A negative control renders the same answers unsafely (plain st.write and
unsafe_allow_html) and must trip the same checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest
from playwright.sync_api import Page
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import Case, ModelRun, Response
from reader_app.results import tidy_responses
from tests.e2e.conftest import ServedApp, artifact, start_app
from tests.factories import make_reader, make_study
from tests.security.conftest import serve_script, stop_app
from tests.security.hostile import HOSTILE_TEXTS, INJECTED_SELECTORS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE_CODE = '<img src=x onerror="window.__xss=1">'
LONG_REPLY = ("<script>window.__xss=1</script> **long** " * 300)[:10_000]
STAND_IN = Path(__file__).resolve().parent / "hostile_dashboard.py"
ANSWERS = "[class*='st-key-answer-']"


def _store_hostile_answers(url: str, asset_dir: Path) -> pd.DataFrame:
    engine = make_engine(url)
    with Session(engine, expire_on_commit=False) as session:
        study = make_study(session, asset_dir, n_cases=len(HOSTILE_TEXTS))
        for code, texts in (("R01", list(HOSTILE_TEXTS.values())), (HOSTILE_CODE, ["**x**"])):
            reader = make_reader(session, study, code=code).reader
            ensure_order(session=session, reader=reader)
            for text in texts:
                case = next_case(session=session, reader=reader)
                assert case is not None
                submit_answer(
                    session=session,
                    reader=reader,
                    case_public_id=case.public_id,
                    answer=validate_answer(text, 2, False),
                    shown_at=None,
                    image_sha256=case.image_sha256,
                )
        run = ModelRun(study_id=study.id, name="<b>model</b>", model="m", source="import")
        session.add(run)
        session.flush()
        assert case is not None
        session.add(
            Response(
                study_id=study.id,
                case_id=_case_id(session, case.public_id),
                model_run_id=run.id,
                diagnosis=LONG_REPLY,
                status="answered",
                raw_reply=LONG_REPLY,
            )
        )
        session.commit()
        assert study.id is not None
        frame = tidy_responses(session=session, study_id=study.id)
    engine.dispose()
    return frame


def _case_id(session: Session, public_id: str) -> int:
    case_id = session.exec(select(Case.id).where(Case.public_id == public_id)).one()
    assert case_id is not None
    return case_id


def _plain(text: str) -> str:
    return " ".join(text.replace("\u2060", "").split())


@pytest.fixture
def stand_in(app_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[ServedApp, pd.DataFrame]]:
    frame = _store_hostile_answers(app_env["READERSTUDY_DATABASE_URL"], tmp_path / "assets")
    app = serve_script(STAND_IN, app_env, tmp_path / "app.log")
    yield app, frame
    stop_app(app)


def _open(page: Page, url: str) -> list[str]:
    """Load a page; return every URL it requested from a host other than 127.0.0.1."""
    foreign: list[str] = []
    page.on(
        "request",
        lambda r: (
            foreign.append(r.url)
            if urlparse(r.url).hostname not in ("127.0.0.1", None) and r.url.startswith("http")
            else None
        ),
    )
    page.goto(url)
    page.get_by_text("end-of-page").wait_for()
    page.wait_for_timeout(500)  # let late images and handlers fire, if any were injected
    return foreign


def _injected(page: Page, scope: str) -> dict[str, int]:
    counts = {sel: page.locator(f"{scope} {sel}").count() for sel in INJECTED_SELECTORS}
    for tag in ("strong", "em", "del", "h2", "h3", "code", "b"):
        counts[tag] = page.locator(f"{scope} {tag}").count()
    return {k: v for k, v in counts.items() if v}


def test_dashboards_show_hostile_answers_as_literal_text(
    stand_in: tuple[ServedApp, pd.DataFrame], page: Page
) -> None:
    app, frame = stand_in
    foreign = _open(page, app.url)
    page.screenshot(path=str(artifact("hostile-dashboard.png")), full_page=False)

    assert page.evaluate("window.__xss") is None, "injected script ran"
    assert _injected(page, ANSWERS) == {}
    assert foreign == [], f"the page fetched from other hosts: {foreign}"
    assert page.locator("[data-testid='stDataFrame']").count() == 1

    assert len(frame) == len(HOSTILE_TEXTS) + 2
    for i, row in enumerate(frame.itertuples()):
        stored = str(row.diagnosis)
        # st.text: byte for byte what was stored (CR LF included)
        assert page.locator(f".st-key-text-{i}").inner_text() == stored
        # escaped markdown and st.html: the same characters (HTML folds whitespace)
        assert _plain(page.locator(f".st-key-md-{i}").inner_text()) == _plain(stored)
        assert _plain(page.locator(f".st-key-html-{i}").inner_text()) == _plain(stored)
        caption = f"{row.responder} · {stored}"
        assert _plain(page.locator(f".st-key-caption-{i}").inner_text()) == _plain(caption)


def test_the_checks_catch_unsafe_rendering(
    stand_in: tuple[ServedApp, pd.DataFrame], page: Page
) -> None:
    """Negative control: plain st.write / unsafe_allow_html of the same answers is caught."""
    app, _ = stand_in
    foreign = _open(page, f"{app.url}/?control=1")
    # the unsafe markdown may still be drawing when "end-of-page" shows (a loaded machine):
    # wait for the injected image itself, then count
    page.locator("[class*='st-key-unsafe-'] img[src='x']").first.wait_for(
        state="attached", timeout=15_000
    )
    injected = _injected(page, "[class*='st-key-unsafe-']")
    assert injected.get("img[src='x']") and injected.get("a[href*='example.invalid']")
    assert injected.get("strong") and injected.get("iframe")
    assert foreign, "the unsafe rendering should have tried to load the remote image"
    # ... while the safe renderings on the same page stay clean
    for safe in ("text", "md", "caption", "html"):
        assert _injected(page, f"[class*='st-key-{safe}-']") == {}


def test_the_app_does_not_echo_a_hostile_sign_in_token(
    app_env: dict[str, str], tmp_path: Path, page: Page
) -> None:
    app = start_app(app_env, tmp_path / "real-app.log")
    try:
        foreign: list[str] = []
        page.on("request", lambda r: foreign.append(r.url) if "127.0.0.1" not in r.url else None)
        page.goto(f"{app.url}/?token=%3Cimg%20src%3Dx%20onerror%3D%22window.__xss%3D1%22%3E")
        page.get_by_text("not valid").first.wait_for()
        assert page.evaluate("window.__xss") is None
        assert page.locator("[data-testid='stMain'] img[src='x']").count() == 0
        assert "onerror" not in page.locator("[data-testid='stMain']").inner_text()
        assert [u for u in foreign if u.startswith("http")] == []
    finally:
        stop_app(app)
