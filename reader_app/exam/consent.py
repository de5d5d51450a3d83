"""Consent on first visit: the study's own text, accepted once and recorded."""

from __future__ import annotations

import hashlib

from sqlmodel import Session

from reader_app.core.audit import record_event
from reader_app.models import Reader, utcnow
from reader_app.study.config import StudyConfig


def needs_consent(reader: Reader, config: StudyConfig) -> bool:
    """Only studies with a consent text ask for it, and only until it is accepted."""
    return bool(config.consent) and reader.consented_at is None


def record_consent(*, session: Session, reader: Reader, config: StudyConfig) -> None:
    """Store the acceptance time, and audit which text was accepted (by its hash)."""
    if reader.consented_at is not None:
        return
    reader.consented_at = utcnow()
    session.add(reader)
    record_event(
        session=session,
        actor=f"reader:{reader.code}",
        action="consent",
        study_id=reader.study_id,
        text_sha256=hashlib.sha256(config.consent.encode("utf-8")).hexdigest(),
    )
    session.commit()
