"""Validate and store one answer. Durable before the caller shows the next case.

A second submit of the same case (double click, two tabs, a retry after a
reload) hits the unique (reader, case, arm) constraint and is reported as a
duplicate: it never creates a second row and never overwrites the first. The
reader's draft of the case (exam/drafts.py) is deleted in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from reader_app.core.auth import AuthError, require_role
from reader_app.core.errors import ReaderStudyError
from reader_app.core.text_rules.answers import forbidden_characters
from reader_app.exam.drafts import clear_draft
from reader_app.exam.timing import first_shown
from reader_app.models import Case, Reader, ReaderOrder, Response, Study
from reader_app.responses import Responder, fill_response

MAX_DIAGNOSIS_CHARS = 300


STATE_MESSAGES = {
    "locked": "The study is paused by its coordinator. Your answers so far are saved; "
    "please come back later.",
    "closed": "This study is closed and no longer takes answers. Thank you for taking part.",
}


class AnswerError(ReaderStudyError, ValueError):
    """The answer cannot be stored; the message is meant for the reader.

    ``field`` names the form field the message is about (``diagnosis``, ``likert``),
    so the page can hide it as soon as that field is filled.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


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
        raise AnswerError("Enter a diagnosis, or choose “I don't know”.", field="diagnosis")
    if len(text) > MAX_DIAGNOSIS_CHARS:
        raise AnswerError(f"Keep the diagnosis to {MAX_DIAGNOSIS_CHARS} characters.")
    if forbidden_characters(
        text
    ):  # reader_app.core.text_rules.answers: the same rule as for models
        raise AnswerError("The diagnosis contains control characters; please retype it.")
    return Answer(diagnosis=text, likert=checked_likert(likert), idk=False)


def checked_likert(likert: int | None) -> int:
    """The 0-4 confidence every answer form needs (a diagnosis or a report)."""
    if likert is None:
        raise AnswerError("Choose your confidence (0-4).", field="likert")
    if isinstance(likert, bool) or not isinstance(likert, int) or not 0 <= likert <= 4:
        raise AnswerError("Confidence must be a whole number from 0 to 4.")
    return likert


@dataclass(frozen=True)
class AnswerColumns:
    """What one validated answer puts in its ``responses`` row (a diagnosis or a report)."""

    status: str
    likert: int | None
    idk: bool
    diagnosis: str | None = None
    findings: str | None = None
    impression: str | None = None
    location_json: str | None = None  # reader_app.grounding.store.location_json's text


def submit_answer(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    answer: Answer,
    shown_at: datetime | None,
    image_sha256: list[str],
    meta: dict[str, object] | None = None,
    interaction: dict[str, object] | None = None,
    active_ms: int | None = None,
    location_json: str | None = None,
    arm: str = "unaided",
    aid_run_id: int | None = None,
) -> SubmitResult:
    """Commit one diagnosis answer (see :func:`store_response`); ``location_json`` is the
    marker as ``exam.location.location_answer`` checked it (grounding studies); ``arm``
    and ``aid_run_id`` as there (the aided step: reader_app/exam/aid.py)."""
    # Callers other than the form (scripts, tests) may build an Answer by hand:
    # accept only what validate_answer itself would have produced.
    if answer != validate_answer(answer.diagnosis, answer.likert, answer.idk):
        raise AnswerError("This answer is not valid: use validate_answer() to build it.")
    return store_response(
        session=session,
        reader=reader,
        case_public_id=case_public_id,
        columns=AnswerColumns(
            status=answer.status,
            likert=answer.likert,
            idk=answer.idk,
            diagnosis=answer.diagnosis,
            location_json=location_json,
        ),
        shown_at=shown_at,
        image_sha256=image_sha256,
        meta=meta,
        interaction=interaction,
        active_ms=active_ms,
        arm=arm,
        aid_run_id=aid_run_id,
    )


def store_response(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    columns: AnswerColumns,
    shown_at: datetime | None,
    image_sha256: list[str],
    meta: dict[str, object] | None = None,
    interaction: dict[str, object] | None = None,
    active_ms: int | None = None,
    arm: str = "unaided",
    aid_run_id: int | None = None,
) -> SubmitResult:
    """Commit one response row; return its id (the first one's, on a duplicate).

    ``arm`` is ``unaided`` (every answer of a study without an aided arm) or
    ``aided`` (the final answer of an AI-aided case, with the model run shown as
    ``aid_run_id``: reader_app/exam/aid.py); one row per (reader, case, arm).

    ``columns`` are the answer's own columns, already validated by the
    form's service (a diagnosis here, a report in exam/report_submit.py). The
    case must be in the reader's order and the study open. ``first_shown_at``
    comes from ``case_shown`` (exam.timing), so it is the first time the case
    was shown whatever the number of reloads.
    """
    require_role(reader, "reader")
    if reader.token_revoked_at is not None:
        raise AuthError("Your access has been revoked. Ask the study coordinator.")
    assert reader.id is not None
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
    response = fill_response(
        None,
        study_id=study.id,
        case_id=case.id,
        responder=Responder(reader_id=reader.id),
        status=columns.status,
        idk=columns.idk,
        diagnosis=columns.diagnosis,
        likert=columns.likert,
        findings=columns.findings,
        impression=columns.impression,
        location_json=columns.location_json,
        image_sha256=image_sha256,
        shown_at=shown_at,
        first_shown_at=first_shown(session=session, reader_id=reader.id, case_id=case.id)
        or shown_at,
        active_ms=active_ms,
        practice=case.practice,
        meta=meta,
        interaction=interaction,
        arm=arm,
        aid_run_id=aid_run_id,
    )
    # the draft goes in the same commit (deleted before the insert is flushed, so a
    # duplicate's IntegrityError still comes from the commit below)
    clear_draft(session=session, reader_id=reader.id, case_id=case.id)
    session.add(response)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        existing = session.exec(
            select(Response.id).where(
                Response.reader_id == reader.id, Response.case_id == case.id, Response.arm == arm
            )
        ).first()
        if existing is None:
            raise
        clear_draft(session=session, reader_id=reader.id, case_id=case.id)  # a stray one
        session.commit()
        return SubmitResult(response_id=existing, duplicate=True)
    assert response.id is not None
    return SubmitResult(response_id=response.id, duplicate=False)
