"""``study.toml`` beside a manifest -> a ``StudyConfig`` (reader_app/study/config.py).

The schema, its defaults and its checks live in ``StudyConfig``; this module
only reads the file and names it in every error.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from reader_app.ingest.errors import IngestError
from reader_app.study.config import DEFAULT_LIKERT, StudyConfig, StudyConfigError

__all__ = ["DEFAULT_LIKERT", "load_study_config"]


def load_study_config(path: Path, *, title: str, practice_cases: int) -> StudyConfig:
    """Read ``path`` (may be absent) and return the complete config; raise IngestError."""
    if not path.exists():
        return StudyConfig(title=title, practice_count=practice_cases)
    name = path.name
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise IngestError(name, f"not valid TOML: {exc}") from exc
    try:
        return StudyConfig.parse(raw, title=title, practice_cases=practice_cases)
    except StudyConfigError as exc:
        raise IngestError(name, str(exc)) from exc
