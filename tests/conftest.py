"""Shared fixtures: a fresh, migrated database per test, on SQLite and on PostgreSQL.

Each database is cloned from a template migrated once per worker (a file copy
for SQLite, ``CREATE DATABASE ... TEMPLATE`` for PostgreSQL), so every test
starts from the real Alembic schema without paying for migrations each time.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session

from reader_app.core.db import make_engine, migrate
from reader_app.core.settings import Settings, load_settings
from tests.support.processes import still_running

# xdist_group marks keep a group on one worker again under pytest 9.2 (see the module)
pytest_plugins = ["tests.support.xdist_groups"]

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
PG_URL = os.environ.get("READERSTUDY_TEST_POSTGRES_URL", "")


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _pg_admin_dsn() -> str:
    url = make_url(PG_URL).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def _pg_url_for(dbname: str) -> str:
    url = make_url(PG_URL).set(drivername="postgresql+psycopg", database=dbname)
    return url.render_as_string(hide_password=False)


def pg_available() -> bool:
    if not PG_URL:
        if IN_CI:
            pytest.fail("CI=true but READERSTUDY_TEST_POSTGRES_URL is not set", pytrace=False)
        return False
    try:
        with psycopg.connect(_pg_admin_dsn(), connect_timeout=5):
            return True
    except psycopg.OperationalError as exc:
        if IN_CI:
            pytest.fail(f"CI=true and PostgreSQL is unreachable: {exc}", pytrace=False)
        return False


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def pg_template() -> str:
    if not pg_available():
        pytest.skip("PostgreSQL not configured (set READERSTUDY_TEST_POSTGRES_URL)")
    name = f"rs_tpl_{_worker()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_pg_admin_dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    migrate(_pg_url_for(name))
    yield name
    with psycopg.connect(_pg_admin_dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def fresh_sqlite_url(template: Path, tmp_path: Path) -> str:
    path = tmp_path / "readerstudy.db"
    shutil.copyfile(template, path)
    return f"sqlite:///{path}"


def clone_sqlite(source: Path, dest: Path) -> str:
    """A consistent copy of a SQLite database (WAL included, through SQLite's backup API).

    For a study built once per session into a database of its own (a slow build,
    say 200 rendered cases), then handed to each test as a private copy.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(dest) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    return f"sqlite:///{dest}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh migrated database URL; every test using it runs on both backends."""
    if request.param == "sqlite":
        yield fresh_sqlite_url(request.getfixturevalue("sqlite_template"), tmp_path)
        return
    template = request.getfixturevalue("pg_template")
    name = f"rs_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_pg_admin_dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    yield _pg_url_for(name)
    with psycopg.connect(_pg_admin_dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_url(sqlite_template: Path, tmp_path: Path) -> str:
    """A fresh migrated SQLite database, for tests that need only one backend."""
    return fresh_sqlite_url(sqlite_template, tmp_path)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    with Session(engine, expire_on_commit=False) as s:
        yield s


@pytest.fixture
def settings(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings pointing at this test's database and a private data folder."""
    data_dir = tmp_path / "data"
    monkeypatch.setenv("READERSTUDY_DATABASE_URL", db_url)
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(data_dir))
    monkeypatch.delenv("READERSTUDY_ASSET_DIR", raising=False)
    return load_settings()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One Chromium per test process, shared by every folder (see tests/e2e/conftest.py)."""
    from tests.e2e.conftest import launch_browser

    with launch_browser() as b:
        yield b


# ------------------------------------------------- no process outlives the suite

_LEFTOVERS = pytest.StashKey[list[str]]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """pytest-xdist's controller: a worker's leftovers (sent in its ``workeroutput``)."""
    output = getattr(node, "workeroutput", None) or {}
    config = getattr(node, "config")  # noqa: B009
    config.stash.setdefault(_LEFTOVERS, []).extend(output.get("leftover_processes", []))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a process the suite launched (tests/support/processes.py) is
    still running at its end; each is named, then killed."""
    left = still_running()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its controller reports them
        workeroutput["leftover_processes"] = left
        return
    left += session.config.stash.get(_LEFTOVERS, [])
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "processes the suite started were still running at its end (killed): "
        if reporter is not None:
            reporter.write_line(message + "; ".join(left), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
