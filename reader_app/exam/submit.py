"""Validate and store one answer. Durable before the caller shows the next case.

A second submit of the same case (double click, two tabs, a retry after a
reload) hits the unique (reader, case) constraint and is reported as a
duplicate: it never creates a second row and never overwrites the first.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from reader_app.auth import AuthError, require_role
from reader_app.models import Case, Reader, ReaderOrder, Response, Study, utcnow

MAX_DIAGNOSIS_CHARS = 300


STATE_MESSAGES = {
    "locked": "The study is paused by its coordinator. Your answers so far are saved; "
    "please come back later.",
    "closed": "This study is closed and no longer takes answers. Thank you for taking part.",
}


class AnswerError(ValueError):
    """The answer cannot be stored; the message is meant for the reader."""


def study_closed_message(state: str) -> str | None:
    """Why a study in this state takes no answers (None when it is open)."""
    if state == "open":
        return None
    return STATE_MESSAGES.get(state, STATE_MESSAGES["closed"])


@dataclass(frozen=True)
class Answer:
    diagnosis: str | None
    likert: int | None
    idk: bool

    @property
    def status(self) -> str:
        return "idk" if self.idk else "answered"


@dataclass(frozen=True)
class SubmitResult:
    response_id: int
    duplicate: bool


def validate_answer(diagnosis: str | None, likert: int | None, idk: bool) -> Answer:
    """Apply the form's rules: IDK carries nothing else; otherwise both fields are needed."""
    if idk:
        return Answer(diagnosis=None, likert=None, idk=True)
    text = (diagnosis or "").strip()
    if not text:
        raise AnswerError("Enter a diagnosis, or choose “I don't know”.")
    if len(text) > MAX_DIAGNOSIS_CHARS:
        raise AnswerError(f"Keep the diagnosis to {MAX_DIAGNOSIS_CHARS} characters.")
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n\r" for ch in text):
        # NUL and other invisible controls: PostgreSQL refuses NUL outright
        raise AnswerError("The diagnosis contains control characters; please retype it.")
    if likert is None:
        raise AnswerError("Choose your confidence (0-4).")
    if isinstance(likert, bool) or not isinstance(likert, int) or not 0 <= likert <= 4:
        raise AnswerError("Confidence must be a whole number from 0 to 4.")
    return Answer(diagnosis=text, likert=likert, idk=False)


def submit_answer(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    answer: Answer,
    shown_at: datetime | None,
    image_sha256: list[str],
    meta: dict[str, object] | None = None,
) -> SubmitResult:
    """Commit one response; return the stored row's id (the first one, on a duplicate)."""
    require_role(reader, "reader")
    if reader.token_revoked_at is not None:
        raise AuthError("Your access has been revoked. Ask the study coordinator.")
    assert reader.id is not None
    # Callers other than the form (scripts, tests) may build an Answer by hand:
    # accept only what validate_answer itself would have produced.
    if answer != validate_answer(answer.diagnosis, answer.likert, answer.idk):
        raise AnswerError("This answer is not valid: use validate_answer() to build it.")
    row = session.exec(
        select(Case, Study)
        .join(Study, Study.id == Case.study_id)  # type: ignore[arg-type]
        .join(ReaderOrder, ReaderOrder.case_id == Case.id)  # type: ignore[arg-type]
        .where(Case.public_id == case_public_id, ReaderOrder.reader_id == reader.id)
    ).first()
    if row is None:
        raise AuthError("This case is not part of your exam.")
    case, study = row
    assert case.id is not None and study.id is not None
    if (closed := study_closed_message(study.state)) is not None:
        raise AnswerError(closed)
    response = Response(
        study_id=study.id,
        case_id=case.id,
        reader_id=reader.id,
        diagnosis=answer.diagnosis,
        likert=answer.likert,
        idk=answer.idk,
        status=answer.status,
        shown_at=shown_at,
        submitted_at=utcnow(),
        image_sha256=",".join(image_sha256),
        practice=case.practice,
        meta_json=json.dumps(meta or {}, sort_keys=True),
    )
    session.add(response)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        existing = session.exec(
            select(Response.id).where(Response.reader_id == reader.id, Response.case_id == case.id)
        ).first()
        if existing is None:
            raise
        return SubmitResult(response_id=existing, duplicate=True)
    assert response.id is not None
    return SubmitResult(response_id=response.id, duplicate=False)
