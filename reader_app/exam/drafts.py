"""Drafts kept by the server: a reader's unsent answer, one row per (reader, case).

The case panel (``ui/static/panel.js``) reports what is on screen as it changes: the
fields, the marker, the viewer record and the active time, about a second after the
last change, at once when a field loses the focus, and when the tab is hidden. The
exam page's callback reads that value once (``exam.submission.read_draft``: the
submit's own checks, texts cut to the form's limits) and keeps it with
:func:`save_draft`. When the panel is drawn for a case, :func:`load_draft` hands it
back, so Pause, a reload, a closed tab, a crashed browser, another workstation or a
server restart find the draft again (the viewer record included).

The reader is always the signed-in one: the page passes it, and nothing in the
panel's value names a reader. A draft for a case outside the reader's exam, for a
case already answered, or while its study is closed or paused (no answer could be
stored either) is refused (:class:`DraftRefused`, its message says which) and nothing
is stored. Which draft is newer is told by the browser's clock, never later than the
server's: a draft edited "in the future" (a wrong browser clock) is kept as edited
now, so it cannot pin itself against every later draft.
``store_response`` (``exam/submit.py``) calls :func:`clear_draft` in the transaction
that stores the answer, so a stored answer leaves no draft behind; and since
:func:`load_draft` never returns a draft of an answered case, a draft never brings a
stored case back (not even one saved by a second tab in the instant of the store).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.auth import require_role
from reader_app.core.errors import ReaderStudyError
from reader_app.models import Case, ExamDraft, Reader, ReaderOrder, Response, Study, utcnow

DRAFT_STUDY_MESSAGES = {
    "locked": "The study is paused by its coordinator: this draft is not kept.",
    "closed": "This study is closed: this draft is not kept.",
}


class DraftRefused(ReaderStudyError, ValueError):
    """The draft is not kept: its case is not in the reader's exam, or is answered."""


@dataclass(frozen=True)
class DraftValues:
    """One draft as the panel reported it, checked (``exam.submission.read_draft``)."""

    case_token: str
    diagnosis: str | None  # None: the form has no diagnosis box (a report)
    findings: str
    impression: str
    likert: int | None
    idk: bool
    no_focal_finding: bool
    marker: dict[str, Any] | None  # {"x", "y", "slice"} in stored-image pixels
    record: dict[str, Any] | None  # the viewer record (exam.submission.clean_interaction)
    active_ms: int | None
    edited_at_ms: int | None  # the browser's clock at the last edit
    updated_at: datetime | None = None  # the server's clock at the last save (loaded drafts)


def _case_of(session: Session, reader_id: int, case_public_id: str) -> tuple[int, bool, str] | None:
    """(case id, already answered, study state) for a case of the reader's exam, else None."""
    row = session.exec(
        select(Case.id, Response.id, Study.state)
        .join(ReaderOrder, col(ReaderOrder.case_id) == Case.id)
        .join(Study, col(Study.id) == Case.study_id)
        .outerjoin(
            Response,
            and_(col(Response.case_id) == Case.id, col(Response.reader_id) == reader_id),
        )
        .where(Case.public_id == case_public_id, ReaderOrder.reader_id == reader_id)
    ).first()
    if row is None or row[0] is None:
        return None
    return row[0], row[1] is not None, row[2]


def _now_ms() -> int:
    return int(utcnow().timestamp() * 1000)


def save_draft(*, session: Session, reader: Reader, values: DraftValues) -> ExamDraft:
    """Keep ``values`` as the reader's draft of its case (insert or replace); commits.

    A value edited before the kept draft was (by the browsers' clocks: a tab that
    reconnects after a server restart re-sends its last report) leaves the kept draft
    as it is, as the panel itself keeps the newer one."""
    require_role(reader, "reader")
    assert reader.id is not None
    found = _case_of(session, reader.id, values.case_token)
    if found is None:
        raise DraftRefused("This case is not part of your exam.")
    case_id, answered, state = found
    if state != "open":
        raise DraftRefused(DRAFT_STUDY_MESSAGES.get(state, DRAFT_STUDY_MESSAGES["closed"]))
    if answered:
        raise DraftRefused("This case is answered; its draft is not kept.")
    if values.edited_at_ms is not None and values.edited_at_ms > (now := _now_ms()):
        values = replace(values, edited_at_ms=now)  # the server's clock bounds the browser's
    for _ in range(2):  # a second tab may insert the row between our read and our insert
        row = session.exec(
            select(ExamDraft).where(ExamDraft.reader_id == reader.id, ExamDraft.case_id == case_id)
        ).first()
        if row is None:
            row = ExamDraft(reader_id=reader.id, case_id=case_id)
        elif _older(values, row):
            return row
        _fill(row, values)
        session.add(row)
        try:
            session.commit()
            return row
        except IntegrityError:
            session.rollback()
    raise DraftRefused("The draft changed in another tab at the same moment; it is kept there.")


def _older(values: DraftValues, row: ExamDraft) -> bool:
    kept, edited = row.edited_at_ms, values.edited_at_ms
    return kept is not None and edited is not None and edited < kept


def _fill(row: ExamDraft, values: DraftValues) -> None:
    row.diagnosis = values.diagnosis
    row.findings = values.findings
    row.impression = values.impression
    row.likert = values.likert
    row.idk = values.idk
    row.no_focal_finding = values.no_focal_finding
    row.marker_json = None if values.marker is None else json.dumps(values.marker, sort_keys=True)
    row.interaction_json = (
        None if values.record is None else json.dumps(values.record, sort_keys=True)
    )
    row.active_ms = values.active_ms
    row.edited_at_ms = values.edited_at_ms
    row.updated_at = utcnow()


def load_draft(*, session: Session, reader_id: int, case_public_id: str) -> DraftValues | None:
    """The reader's draft of this case, or None (none kept, or the case is answered)."""
    return load_drafts(session=session, reader_id=reader_id, case_public_ids=[case_public_id]).get(
        case_public_id
    )


def load_drafts(
    *, session: Session, reader_id: int, case_public_ids: Sequence[str]
) -> dict[str, DraftValues]:
    """The reader's drafts of these cases (the one on screen and the one after it), in one
    read; a case without a draft, or answered, is not in the result."""
    if not case_public_ids:
        return {}
    answered = (
        select(Response.id)
        .where(Response.reader_id == reader_id, Response.case_id == ExamDraft.case_id)
        .exists()
    )
    rows = session.exec(
        select(ExamDraft, Case.public_id)
        .join(Case, col(Case.id) == ExamDraft.case_id)
        .where(
            ExamDraft.reader_id == reader_id,
            col(Case.public_id).in_(list(case_public_ids)),
            ~answered,
        )
    ).all()
    return {public_id: _values(public_id, row) for row, public_id in rows}


def _values(case_public_id: str, row: ExamDraft) -> DraftValues:
    return DraftValues(
        case_token=case_public_id,
        diagnosis=row.diagnosis,
        findings=row.findings or "",
        impression=row.impression or "",
        likert=row.likert,
        idk=row.idk,
        no_focal_finding=row.no_focal_finding,
        marker=None if row.marker_json is None else json.loads(row.marker_json),
        record=None if row.interaction_json is None else json.loads(row.interaction_json),
        active_ms=row.active_ms,
        edited_at_ms=row.edited_at_ms,
        updated_at=row.updated_at,
    )


def clear_draft(*, session: Session, reader_id: int, case_id: int) -> None:
    """Delete the reader's draft of this case in the caller's transaction (no commit)."""
    session.exec(
        delete(ExamDraft).where(
            col(ExamDraft.reader_id) == reader_id, col(ExamDraft.case_id) == case_id
        )
    )
