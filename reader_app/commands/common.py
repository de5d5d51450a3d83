"""Helpers shared by CLI commands: settings, migrated engine, study lookup, errors."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sqlmodel import Session

from reader_app.casebank import get_study
from reader_app.db import get_engine, migrate, session_scope
from reader_app.models import Study
from reader_app.settings import Settings, SettingsError, load_settings


class CommandError(RuntimeError):
    """A user-facing failure: printed without a traceback, exit code 1."""


def settings_or_exit() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        print(f"readerstudy: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


@contextmanager
def cli_session(settings: Settings) -> Iterator[Session]:
    """A committed-on-success session on a migrated database."""
    migrate(settings.database_url)
    with session_scope(get_engine(settings.database_url)) as session:
        yield session


def require_study(session: Session, slug: str) -> Study:
    study = get_study(session=session, slug=slug)
    if study is None:
        raise CommandError(f"no study named {slug!r}")
    return study


def fail(message: str) -> int:
    print(f"readerstudy: {message}", file=sys.stderr)
    return 1
