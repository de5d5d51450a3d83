"""Changing an earlier answer, when the study allows it; every earlier answer is kept.

A revision copies the current answer (with its submission time, its active time
and its viewer record) into ``response_revisions``, then updates the response in
place with ``revision + 1`` and the revision's OWN active time and viewer record
(the time and gestures spent changing it, never the first answer's). The update
is conditional on the revision the reader saw, so two tabs revising at once
cannot silently overwrite each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlmodel import Session, col, select

from reader_app.core.auth import require_role
from reader_app.exam.aid import revisable_arm
from reader_app.exam.submit import Answer, AnswerError, study_closed_message
from reader_app.models import (
    Case,
    Reader,
    ReaderOrder,
    Response,
    ResponseRevision,
    Study,
    utcnow,
)
from reader_app.study.config import StudyConfig

_FINAL_IN_AID = {
    "unaided": (
        "Your own answer, given before the model's, is final in this study; "
        "you can change your final answer instead."
    ),
    "aided": "This answer is final: its reading period is over.",
}


@dataclass(frozen=True)
class StoredAnswer:
    response_id: int
    diagnosis: str | None
    likert: int | None
    idk: bool
    revision: int
    submitted_at: datetime
    location_json: str | None = None  # the marker (grounding studies), as stored
    arm: str = "unaided"  # which of an AI-aided study's rows (SCORING.md section 10)


def _stored(response: Response) -> StoredAnswer:
    assert response.id is not None
    return StoredAnswer(
        response.id,
        response.diagnosis,
        response.likert,
        response.idk,
        response.revision,
        response.submitted_at,
        response.location_json,
        response.arm,
    )


def stored_answer(
    *, session: Session, reader: Reader, case_public_id: str, arm: str = "unaided"
) -> StoredAnswer | None:
    """The reader's answer to a case in one arm (an AI-aided study has a row per arm)."""
    response = session.exec(
        select(Response)
        .join(Case, col(Case.id) == Response.case_id)
        .where(
            Case.public_id == case_public_id,
            Response.reader_id == reader.id,
            Response.arm == arm,
        )
    ).first()
    return None if response is None else _stored(response)


def revisable_answer(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    now: Callable[[], datetime] = utcnow,
) -> StoredAnswer | None:
    """The answer to a case the reader may change now: in an AI-aided study, the row
    ``exam.aid.revisable_arm`` names (None when every row of the case is final)."""
    case_id = session.exec(
        select(Case.id)
        .join(ReaderOrder, col(ReaderOrder.case_id) == Case.id)
        .where(Case.public_id == case_public_id, ReaderOrder.reader_id == reader.id)
    ).first()
    if case_id is None:
        return None
    arm = revisable_arm(session, reader, case_id, now=now)
    if arm is None:
        return None
    return stored_answer(session=session, reader=reader, case_public_id=case_public_id, arm=arm)


def revisable_slots(*, session: Session, reader: Reader) -> list[int]:
    """Slots of the reader's answered, scored cases, in order (practice is final)."""
    return list(
        session.exec(
            select(ReaderOrder.slot)
            .join(Case, col(Case.id) == ReaderOrder.case_id)
            .join(
                Response,
                (col(Response.case_id) == Case.id)
                & (col(Response.reader_id) == ReaderOrder.reader_id),
            )
            .where(ReaderOrder.reader_id == reader.id, col(Case.practice).is_(False))
            .distinct()  # an AI-aided study has a row per arm
            .order_by(col(ReaderOrder.slot))
        )
    )


def revise_answer(
    *,
    session: Session,
    reader: Reader,
    config: StudyConfig,
    case_public_id: str,
    answer: Answer,
    seen_revision: int,
    location_json: str | None = None,
    active_ms: int | None = None,
    interaction: dict[str, Any] | None = None,
    arm: str = "unaided",
    now: Callable[[], datetime] = utcnow,
) -> StoredAnswer:
    """Replace an earlier answer, keeping the old one in history; return the new state.

    ``arm``: which row of the case (an AI-aided study has one per arm); only the one
    ``exam.aid.revisable_arm`` allows now may change, and nothing else is touched.

    ``location_json`` is the changed answer's marker (``exam.location``); ``active_ms``
    and ``interaction`` the visible time and viewer record of the revision itself (None:
    not known). What they replace goes into the history with the rest of the earlier
    answer."""
    require_role(reader, "reader")
    if not config.allow_revisions:
        raise AnswerError("This study does not allow changing earlier answers.")
    row = session.exec(
        select(Response, Case, Study)
        .join(Case, col(Case.id) == Response.case_id)
        .join(Study, col(Study.id) == Case.study_id)
        .where(
            Case.public_id == case_public_id,
            Response.reader_id == reader.id,
            Response.arm == arm,
        )
    ).first()
    if row is None:
        raise AnswerError("This case has no answer to change yet.")
    response, case, study = row
    if (closed := study_closed_message(study.state)) is not None:
        raise AnswerError(closed)
    if case.practice:
        raise AnswerError("Practice answers are final.")
    assert case.id is not None
    if revisable_arm(session, reader, case.id, now=now) != arm:
        raise AnswerError(_FINAL_IN_AID.get(arm, "This answer is final."))
    if response.revision != seen_revision:
        raise AnswerError("This answer was changed in another window. Reload to see it.")
    if (response.diagnosis, response.likert, response.idk, response.location_json) == (
        answer.diagnosis,
        answer.likert,
        answer.idk,
        location_json,
    ):
        return _stored(response)  # nothing changed: no revision
    stamp = utcnow()
    assert response.id is not None
    session.add(
        ResponseRevision(
            response_id=response.id,
            diagnosis=response.diagnosis,
            likert=response.likert,
            idk=response.idk,
            status=response.status,
            submitted_at=response.submitted_at,
            replaced_at=stamp,
            location_json=response.location_json,
            active_ms=response.active_ms,
            interaction_json=response.interaction_json,
        )
    )
    result = session.exec(
        update(Response)
        .where(col(Response.id) == response.id, col(Response.revision) == seen_revision)
        .values(
            diagnosis=answer.diagnosis,
            likert=answer.likert,
            idk=answer.idk,
            status=answer.status,
            location_json=location_json,
            active_ms=active_ms,
            interaction_json=(
                None if interaction is None else json.dumps(interaction, sort_keys=True)
            ),
            submitted_at=stamp,
            revision=seen_revision + 1,
        )
    )
    if result.rowcount != 1:
        session.rollback()
        raise AnswerError("This answer was changed in another window. Reload to see it.")
    session.commit()
    session.refresh(response)
    return _stored(response)


def answer_history(*, session: Session, response_id: int) -> list[ResponseRevision]:
    """Earlier answers of one response, oldest first."""
    return list(
        session.exec(
            select(ResponseRevision)
            .where(ResponseRevision.response_id == response_id)
            .order_by(col(ResponseRevision.replaced_at), col(ResponseRevision.id))
        )
    )
