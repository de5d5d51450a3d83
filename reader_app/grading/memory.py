"""Grade memory: one active verdict per (case, normalized answer).

Every later identical answer, from a reader or a model run, reuses it: the
tidy frame (reader_app.results) reads ``correct`` from the active verdicts.
A changed verdict never overwrites: the old row is deactivated and kept, and
the database refuses two active rows for one answer (index uq_verdict_active).
These functions flush but do not commit; the calling service owns the
transaction.
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.errors import ReaderStudyError
from reader_app.models import Case, Verdict, utcnow

# "import": an authoritative verdict from an imported file (reader_app/runs/import_writer.py)
SOURCES = ("key", "adjudicator", "judge", "import")


class ConcurrentDecision(ReaderStudyError, RuntimeError):
    """Someone else recorded a verdict for this answer at the same moment."""


def active_verdict(*, session: Session, case_id: int, normalized_answer: str) -> Verdict | None:
    return session.exec(
        select(Verdict).where(
            Verdict.case_id == case_id,
            Verdict.normalized_answer == normalized_answer,
            col(Verdict.active).is_(True),
        )
    ).first()


def active_verdicts(*, session: Session, study_id: int) -> dict[tuple[int, str], Verdict]:
    rows = session.exec(
        select(Verdict)
        .join(Case, col(Case.id) == Verdict.case_id)
        .where(Case.study_id == study_id, col(Verdict.active).is_(True))
    ).all()
    return {(v.case_id, v.normalized_answer): v for v in rows}


def record_verdict(
    *,
    session: Session,
    study_id: int,
    case_id: int,
    normalized_answer: str,
    correct: int | bool,
    source: str,
    decided_by: str,
    note: str | None = None,
    actor: str | None = None,
) -> Verdict:
    """Store a verdict, retiring the active one for this answer (kept as history)."""
    if source not in SOURCES:
        raise ValueError(f"verdict source must be one of {SOURCES}, not {source!r}")
    if not normalized_answer:
        raise ValueError("an empty answer cannot be graded")
    value = int(bool(correct))
    try:
        with session.begin_nested():
            old = active_verdict(
                session=session, case_id=case_id, normalized_answer=normalized_answer
            )
            if old is not None:
                old.active = False
                session.add(old)
                session.flush()
            verdict = Verdict(
                case_id=case_id,
                normalized_answer=normalized_answer,
                correct=value,
                source=source,
                decided_by=decided_by,
                decided_at=utcnow(),
                note=note or None,
                active=True,
            )
            session.add(verdict)
            session.flush()
    except IntegrityError as exc:
        raise ConcurrentDecision(
            "This answer was graded by someone else a moment ago; the queue has moved on."
        ) from exc
    record_event(
        session=session,
        actor=actor or decided_by,
        action="verdict.record",
        study_id=study_id,
        case_id=case_id,
        answer=normalized_answer,
        correct=value,
        source=source,
        replaces=None if old is None else old.id,
        previous=None if old is None else old.correct,
    )
    return verdict


def retire_verdict(
    *, session: Session, study_id: int, verdict: Verdict, actor: str, reason: str
) -> None:
    """Deactivate a verdict without a replacement: its answer is ungraded again."""
    verdict.active = False
    session.add(verdict)
    session.flush()
    record_event(
        session=session,
        actor=actor,
        action="verdict.retire",
        study_id=study_id,
        case_id=verdict.case_id,
        answer=verdict.normalized_answer,
        verdict_id=verdict.id,
        correct=verdict.correct,
        source=verdict.source,
        reason=reason,
    )


def verdict_history(*, session: Session, case_id: int, normalized_answer: str) -> list[Verdict]:
    """Every verdict ever stored for this answer, oldest first (the last may be active)."""
    return list(
        session.exec(
            select(Verdict)
            .where(Verdict.case_id == case_id, Verdict.normalized_answer == normalized_answer)
            .order_by(col(Verdict.decided_at), col(Verdict.id))
        ).all()
    )
