"""Helpers shared by CLI commands: settings, migrated engine, study lookup, errors."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlmodel import Session

from reader_app.core.db import get_engine, migrate, session_scope
from reader_app.core.errors import ReaderStudyError
from reader_app.core.settings import Settings, SettingsError, load_settings
from reader_app.models import Study
from reader_app.study.casebank import get_study


class CommandError(ReaderStudyError, RuntimeError):
    """A user-facing failure of a command: ``cli.main`` prints it, exit code 2."""


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
        raise CommandError(f"no study named {slug!r} in {database_name(session)}")
    return study


def database_name(session: Session) -> str:
    """The database a session works on, for messages: the SQLite file, or the server URL
    without its password; plus how to choose another one."""
    url = session.get_bind().engine.url
    where = (
        f"the database {url.database}"
        if url.get_backend_name() == "sqlite"
        else f"the database {url.render_as_string(hide_password=True)}"
    )
    return f"{where} (set READERSTUDY_DATABASE_URL or READERSTUDY_DATA_DIR to use another)"


def fail(message: str) -> int:
    """Print a refusal the way ``cli.main`` prints a ReaderStudyError; exit code 2."""
    print(f"readerstudy: {message}", file=sys.stderr)
    return 2


def roster_names(names: list[str], roster_file: str | None) -> list[str]:
    """RadLE's roster: the models named with ``--exclude`` and those of ``--exclude-file``
    (scoring.io.radle.read_roster: one a line, ``#`` comments)."""
    if not roster_file:
        return list(names)
    try:
        text = Path(roster_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read the roster file {roster_file}: {exc}") from exc
    # imported here: ``readerstudy serve`` imports this module, and scoring.io's pandas
    # would cost every served app's start (docs/performance.md)
    from scoring.io import read_roster

    return [*names, *read_roster(text)]
