"""Standard ``logging`` for readerstudy, configured once for the CLI and the Streamlit app.

Modules log with ``log = logging.getLogger(__name__)``; this sets up the
``reader_app`` logger only (libraries keep their own levels, so Alembic's and
httpx's chatter stays out): one handler that writes to the current
``sys.stderr``, lines like ``2026-12-01 04:30:00 INFO reader_app.core.db: ...``, and
the level from ``READERSTUDY_LOG_LEVEL`` (default ``INFO``).

What a log line may hold: counts, ids, file names, revisions, reasons. Never a
sign-in token, a reader's answer, an email address or anything read from an
image's header (tests/reader_app/core/test_logs.py runs real flows and checks).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from reader_app.core.settings import DEFAULT_LOG_LEVEL, SettingsError

LEVEL_VARIABLE = "READERSTUDY_LOG_LEVEL"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _CurrentStderr(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stderr`` is at the moment (pytest swaps it per test)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def log_level(environ: Mapping[str, str] | None = None) -> int:
    """The level named by READERSTUDY_LOG_LEVEL; a SettingsError for an unknown name."""
    env = os.environ if environ is None else environ
    name = env.get(LEVEL_VARIABLE, DEFAULT_LOG_LEVEL).strip().upper() or DEFAULT_LOG_LEVEL
    if name not in LEVELS:
        raise SettingsError(f"{LEVEL_VARIABLE}: must be one of {', '.join(LEVELS)}, not {name!r}")
    return int(getattr(logging, name))


def configure_logging(environ: Mapping[str, str] | None = None) -> logging.Logger:
    """Set up the ``reader_app`` logger; calling it again only re-reads the level."""
    logger = logging.getLogger("reader_app")
    logger.setLevel(log_level(environ))
    if not any(isinstance(h, _CurrentStderr) for h in logger.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter(FORMAT, "%Y-%m-%d %H:%M:%S"))
        logger.addHandler(handler)
    return logger
