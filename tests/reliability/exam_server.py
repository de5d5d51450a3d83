"""One reader's exam served by our own ``readerstudy serve`` in a browser context of its
own: the setup the outage and server-restart walks share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Page
from sqlalchemy import Engine
from sqlmodel import Session

from reader_app.core.auth import sign_in_link
from reader_app.core.db import make_engine
from reader_app.core.settings import load_settings
from tests.e2e.conftest import ServedApp, owned_app, stop_app
from tests.factories import make_reader, make_study


@dataclass
class ExamWalk:
    app: ServedApp  # replaced by a walk that restarts the server; the last one is stopped
    page: Page
    engine: Engine
    link: str  # the reader's sign-in link


@contextmanager
def exam_walk(env: dict[str, str], log: Path, browser: Any, n_cases: int) -> Iterator[ExamWalk]:
    """A study of ``n_cases``, a reader ready to start, the app served, a 1024x768 page."""
    settings = load_settings(env)
    engine = make_engine(settings.database_url)
    with Session(engine, expire_on_commit=False) as db:
        study = make_study(db, settings.asset_dir, n_cases=n_cases)
        invite = make_reader(db, study, ready=True)
    walk: ExamWalk | None = None
    try:
        with owned_app() as owner:  # stops the app even when the browser fails to open
            app = owner.start(env, log)
            context = browser.new_context(viewport={"width": 1024, "height": 768})
            try:
                page = context.new_page()
                page.set_default_timeout(30_000)
                link = sign_in_link(app.url, invite.token)
                walk = ExamWalk(app=app, page=page, engine=engine, link=link)
                yield walk
            finally:
                context.close()
                if walk is not None and walk.app is not app:  # restarted by the test
                    stop_app(walk.app)
    finally:
        engine.dispose()
