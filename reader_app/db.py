"""Engine, sessions and migrations for SQLite (WAL) and PostgreSQL (psycopg)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool
from sqlmodel import Session, create_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


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
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def migrate(url: str) -> None:
    """Bring the schema to the newest revision (idempotent).

    "heads" rather than "head": independent feature branches of the migration
    tree may each add their own tables.
    """
    command.upgrade(alembic_config(url), "heads")
