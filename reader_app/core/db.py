"""Engine, sessions and migrations for SQLite (WAL) and PostgreSQL (psycopg)."""

from __future__ import annotations

import fcntl
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, make_url, text
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool
from sqlmodel import Session, create_engine

# Alembic (with Mako and Pygments, ~12 MiB resident) is imported inside the migration
# functions: the app's pages import this module for the engine and never migrate.
if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"
log = logging.getLogger(__name__)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL is durable across app crashes
    cur.close()


def make_engine(url: str, *, pooled: bool = True) -> Engine:
    """Build an engine; SQLite gets WAL, a busy timeout and foreign keys."""
    extra: dict[str, Any] = {} if pooled else {"poolclass": NullPool}
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 10}, **extra
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if pooled:
        extra = {"pool_size": 10, "max_overflow": 20}
    # pre_ping lets the app survive a PostgreSQL restart without a stack trace.
    return create_engine(url, pool_pre_ping=True, **extra)


@lru_cache(maxsize=8)
def get_engine(url: str) -> Engine:
    """One engine (and connection pool) per URL per process."""
    return make_engine(url)


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session that commits on success and rolls back on any error."""
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


# Arbitrary, fixed key for PostgreSQL's advisory lock ("rdst").
MIGRATION_LOCK_KEY = 0x72647374


@contextmanager
def migration_lock(url: str) -> Iterator[None]:
    """Serialize migrations across processes: replicas may start at the same moment.

    PostgreSQL: a session-level advisory lock held on its own connection.
    SQLite: an exclusive flock on a file beside the database.
    """
    if url.startswith("postgresql"):
        engine = make_engine(url, pooled=False)
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
                conn.commit()
                try:
                    yield
                finally:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
                    conn.commit()
        finally:
            engine.dispose()
        return
    database = make_url(url).database
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate-lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def migrate(url: str) -> None:
    """Bring the schema to the newest revision (idempotent, safe to run concurrently).

    "heads" rather than "head": independent feature branches of the migration
    tree may each add their own tables.
    """
    from alembic import command

    with migration_lock(url):
        before = _revisions(url)
        command.upgrade(alembic_config(url), "heads")
        after = _revisions(url)
    if after != before:
        log.info(
            "database %s migrated: %s -> %s",
            _shown(url),
            ", ".join(sorted(before)) or "empty",
            ", ".join(sorted(after)),
        )


def _revisions(url: str) -> set[str]:
    """The Alembic revisions the database is at (empty for a new database)."""
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            return set(MigrationContext.configure(conn).get_current_heads())
    finally:
        engine.dispose()


def _shown(url: str) -> str:
    """The URL without its password, for a log line."""
    return make_url(url).render_as_string(hide_password=True)
