"""The exam's view of a study's settings (``study.toml``, stored as ``Study.config_json``).

Ingest fills every key; studies built another way (tests, older imports) may
lack some, so each has a default here and a malformed value falls back to it
instead of breaking a reader's exam.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reader_app.casebank import study_config
from reader_app.models import Study

DEFAULT_LIKERT_LABELS = ("a guess", "unsure", "moderately sure", "confident", "certain")


@dataclass(frozen=True)
class ExamConfig:
    title: str
    consent: str  # empty: no consent step
    practice_count: int | None  # None: every case the manifest marks practice
    allow_revisions: bool
    likert_labels: tuple[str, str, str, str, str]
    default_windows: tuple[str, ...]


def _labels(value: Any) -> tuple[str, str, str, str, str]:
    if isinstance(value, list | tuple) and len(value) == 5:
        labels = [str(v).strip() for v in value]
        if all(labels):
            return (labels[0], labels[1], labels[2], labels[3], labels[4])
    return DEFAULT_LIKERT_LABELS


def _windows(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value if str(v))
    return ()


def exam_config(study: Study) -> ExamConfig:
    raw = study_config(study)
    count = raw.get("practice_count")
    practice_count = (
        count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
    )
    consent = raw.get("consent")
    return ExamConfig(
        title=str(raw.get("title") or study.title),
        consent=consent.strip() if isinstance(consent, str) else "",
        practice_count=practice_count,
        allow_revisions=raw.get("allow_revisions") is True,
        likert_labels=_labels(raw.get("likert_labels")),
        default_windows=_windows(raw.get("default_windows")),
    )
