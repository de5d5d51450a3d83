"""Report rubric grading (SCORING.md section 6): one 0-40 grade per report.

For studies whose config turns on ``report_fields``, every non-practice
response with a Findings or Impression text waits in the adjudicator's
"Reports" queue, blinded like the diagnosis queue. A re-grade supersedes the
active grade and keeps the old one. ``grading.rubric_grades.rubric_frame``
returns the grades in the shape ``scoring.rubric.rubric_summary`` takes.

With LLM judges (``grading.rubric_judge``), a report scored by the study's one
judge, or by its two judges within the gap, leaves the queue with that score; a
disagreement stays for a human. A
human grade always stands over a judgement. The adjudicator reads the case's
reference report (the manifest's ``reference_findings``/``reference_impression``)
where there is one, else the answer key's diagnosis.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import or_
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.auth import require_role
from reader_app.exam.next_case import ImageView, image_mm
from reader_app.grading.config import grading_config
from reader_app.grading.key import case_key
from reader_app.grading.rubric_grades import RUBRIC_MAX, RubricError, agreed_judgements
from reader_app.models import (
    Case,
    CaseImage,
    Reader,
    Response,
    RubricGrade,
    Study,
    utcnow,
)
from reader_app.study.case_reports import reference_reports


@dataclass(frozen=True)
class RubricItem:
    """One report to grade: images, reference and the report text; no responder."""

    item_id: str
    case_public_id: str
    case_kind: str  # spot | strip (the case's kind, not the responder's)
    history: str | None
    images: tuple[ImageView, ...]
    reference: str
    reference_is_report: bool  # the case's reference report, else the key's diagnosis
    findings: str
    impression: str


@dataclass(frozen=True)
class RubricQueueView:
    size: int
    item: RubricItem | None


def rubric_item_id(response_id: int, case_public_id: str) -> str:
    return hashlib.sha256(f"rubric\x1f{response_id}\x1f{case_public_id}".encode()).hexdigest()[:20]


def _shuffle(adjudicator_id: int, item_id: str) -> str:
    return hashlib.sha256(f"{adjudicator_id}:{item_id}".encode()).hexdigest()


def _reports(session: Session, study_id: int) -> list[tuple[Response, Case]]:
    rows = session.exec(
        select(Response, Case)
        .join(Case, col(Case.id) == Response.case_id)
        .where(
            Response.study_id == study_id,
            col(Response.practice).is_(False),
            or_(col(Response.findings).is_not(None), col(Response.impression).is_not(None)),
        )
        .order_by(col(Response.id))
    ).all()
    return [(r, c) for r, c in rows if (r.findings or "").strip() or (r.impression or "").strip()]


def report_responses(session: Session, study_id: int) -> list[tuple[Response, Case]]:
    """Every non-practice response of the study with a Findings or Impression text."""
    return _reports(session, study_id)


def _graded_ids(session: Session, study_id: int) -> set[int]:
    return set(
        session.exec(
            select(RubricGrade.response_id)
            .join(Response, col(Response.id) == RubricGrade.response_id)
            .where(Response.study_id == study_id, col(RubricGrade.active).is_(True))
        ).all()
    )


def rubric_queue(
    *, session: Session, adjudicator: Reader, skip: tuple[str, ...] = ()
) -> RubricQueueView:
    """Reports waiting for a grade in the adjudicator's study (empty when rubric is off)."""
    require_role(adjudicator, "adjudicator")
    assert adjudicator.id is not None
    study = session.get(Study, adjudicator.study_id)
    assert study is not None and study.id is not None
    if not grading_config(study).rubric_enabled:
        return RubricQueueView(size=0, item=None)
    graded = _graded_ids(session, study.id) | set(agreed_judgements(session, study.id))
    waiting = [
        (rubric_item_id(r.id or 0, c.public_id), r, c)
        for r, c in _reports(session, study.id)
        if r.id not in graded
    ]
    if not waiting:
        return RubricQueueView(size=0, item=None)
    aid = adjudicator.id
    waiting.sort(key=lambda t: _shuffle(aid, t[0]))
    item_id, response, case = next((w for w in waiting if w[0] not in set(skip)), waiting[0])
    images = session.exec(
        select(CaseImage).where(CaseImage.case_id == case.id).order_by(col(CaseImage.seq))
    ).all()
    entry = case_key(session=session, case_id=case.id or 0)
    ref = reference_reports(session=session, study_id=study.id).get(case.id or 0)
    return RubricQueueView(
        size=len(waiting),
        item=RubricItem(
            item_id=item_id,
            case_public_id=case.public_id,
            case_kind=case.kind,
            history=case.history,
            images=tuple(
                ImageView(i.sha256, i.label, i.window, i.role, i.width, i.height, image_mm(i))
                for i in images
            ),
            reference=ref.text() if ref else (entry.diagnosis if entry else ""),
            reference_is_report=ref is not None,
            findings=(response.findings or "").strip(),
            impression=(response.impression or "").strip(),
        ),
    )


def _resolve(session: Session, study_id: int, item_id: str) -> Response:
    for response, case in _reports(session, study_id):
        if rubric_item_id(response.id or 0, case.public_id) == item_id:
            return response
    raise RubricError("This report is no longer waiting for a grade.")


def record_rubric_grade(
    *, session: Session, adjudicator: Reader, item_id: str, score: int, note: str | None = None
) -> RubricGrade:
    """Store a 0-40 grade for a report; a re-grade supersedes (history kept, audited)."""
    require_role(adjudicator, "adjudicator")
    assert adjudicator.id is not None
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= RUBRIC_MAX:
        raise RubricError(f"a rubric grade is a whole number 0..{RUBRIC_MAX}")
    study = session.get(Study, adjudicator.study_id)
    assert study is not None and study.id is not None
    if not grading_config(study).rubric_enabled:
        raise RubricError("This study does not collect reports.")
    response = _resolve(session, study.id, item_id)
    assert response.id is not None
    old = session.exec(
        select(RubricGrade).where(
            RubricGrade.response_id == response.id, col(RubricGrade.active).is_(True)
        )
    ).first()
    grade = RubricGrade(
        response_id=response.id,
        adjudicator_id=adjudicator.id,
        score=score,
        note=(note or "").strip()[:2000] or None,
        graded_at=utcnow(),
    )
    try:
        with session.begin_nested():
            if old is not None:
                old.active = False
                session.add(old)
                session.flush()
            session.add(grade)
            session.flush()
    except IntegrityError as exc:
        raise RubricError("This report was graded by someone else a moment ago.") from exc
    record_event(
        session=session,
        actor=adjudicator.code,
        action="rubric.grade",
        study_id=study.id,
        response_id=response.id,
        score=score,
        previous=None if old is None else old.score,
    )
    session.commit()
    return grade


@dataclass(frozen=True)
class RubricUndo:
    item_id: str  # the report, back in the adjudicator's queue
    score: int  # the grade taken back


def undo_last_rubric_grade(*, session: Session, adjudicator: Reader) -> RubricUndo:
    """Take back the most recent of the adjudicator's report grades that still stands
    (issue 38): it stays in the database as history (``active`` false), the undo is
    audited, and the report is back in the queue, ungraded."""
    require_role(adjudicator, "adjudicator")
    study = session.get(Study, adjudicator.study_id)
    assert study is not None and study.id is not None
    found = session.exec(
        select(RubricGrade, Response, Case)
        .join(Response, col(Response.id) == col(RubricGrade.response_id))
        .join(Case, col(Case.id) == col(Response.case_id))
        .where(
            Case.study_id == study.id,
            RubricGrade.adjudicator_id == adjudicator.id,
            col(RubricGrade.active).is_(True),
        )
        .order_by(col(RubricGrade.graded_at).desc(), col(RubricGrade.id).desc())
    ).first()
    if found is None:
        raise RubricError("You have no report grade to undo.")
    grade, response, case = found
    grade.active = False
    session.add(grade)
    record_event(
        session=session,
        actor=adjudicator.code,
        action="rubric.undo",
        study_id=study.id,
        response_id=response.id,
        score=grade.score,
    )
    session.commit()
    return RubricUndo(rubric_item_id(response.id or 0, case.public_id), grade.score)
