"""AppTest helpers: run the real app script against a test database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from sqlalchemy import event
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from reader_app.core.db import get_engine, make_engine
from reader_app.core.settings import Settings, load_settings
from tests.conftest import fresh_sqlite_url

MAIN = str(Path(__file__).resolve().parents[3] / "reader_app" / "main.py")


@pytest.fixture
def app_for(settings: object) -> Callable[..., AppTest]:
    """Return a factory: token -> a fresh AppTest signed in with that token (already run).

    ``secrets`` and ``user`` seed ``st.secrets`` and ``st.user`` (for OIDC).
    """
    st.cache_resource.clear()
    st.cache_data.clear()

    def make(
        token: str, *, secrets: dict[str, Any] | None = None, user: dict[str, Any] | None = None
    ) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=30)
        if token:
            at.query_params["token"] = token
        if secrets is not None:
            at.secrets = secrets
        if user is not None:
            at.user = user
        return at.run()

    return make


@pytest.fixture
def sql_log(settings: Settings) -> Iterator[list[str]]:
    """Every SQL statement the app's engine runs while the test is going."""
    engine = get_engine(settings.database_url)
    statements: list[str] = []

    def log(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", log)
    yield statements
    event.remove(engine, "before_cursor_execute", log)


@pytest.fixture
def db(
    sqlite_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Settings, Session]]:
    """A migrated SQLite database in the environment, for a page run in a fresh interpreter
    (what it imports does not depend on the backend)."""
    monkeypatch.setenv("READERSTUDY_DATABASE_URL", fresh_sqlite_url(sqlite_template, tmp_path))
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("READERSTUDY_ASSET_DIR", raising=False)
    settings = load_settings()
    engine = make_engine(settings.database_url)
    with Session(engine, expire_on_commit=False) as session:
        yield settings, session
    engine.dispose()
