"""Reading time that means something.

``first_shown_at``: the first time a reader was shown a case, written once into
``case_shown`` when the page first draws the case, so a reload (a new browser
session) finds the same time instead of restarting the clock.

``active_ms``: how long the case page was visible to the reader. The browser
counts it (pauses hide the case; a hidden tab does not count) and sends it with
the answer; :func:`active_ms` only accepts a figure that fits within the time
since the case was first shown, and otherwise falls back to the server's own
estimate (time since shown in this session, minus pauses).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, select

from reader_app.models import Case, CaseShown, utcnow

SLACK_MS = 5_000  # browser and server clocks tick apart a little


def mark_shown(
    *, session: Session, reader_id: int, case_public_id: str, at: datetime | None = None
) -> datetime:
    """Record that the reader is shown the case now, unless it was shown before; return
    the first time it was shown. Commits (one insert that may do nothing, one read)."""
    case_id = session.exec(select(Case.id).where(Case.public_id == case_public_id)).one()
    when = at or utcnow()
    values = {"reader_id": reader_id, "case_id": case_id, "first_shown_at": when}
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(CaseShown).values(**values).on_conflict_do_nothing()
    session.exec(stmt)
    session.commit()
    first = session.exec(
        select(CaseShown.first_shown_at).where(
            CaseShown.reader_id == reader_id, CaseShown.case_id == case_id
        )
    ).one()
    return first


def first_shown(*, session: Session, reader_id: int, case_id: int) -> datetime | None:
    return session.exec(
        select(CaseShown.first_shown_at).where(
            CaseShown.reader_id == reader_id, CaseShown.case_id == case_id
        )
    ).first()


def active_ms(
    reported: object,
    *,
    first_shown_at: datetime | None,
    shown_at: datetime | None,
    paused_s: float = 0.0,
    now: datetime | None = None,
) -> int | None:
    """The browser's count of visible milliseconds if plausible, else the server's estimate.

    Plausible: a whole number from 0 up to the time since the case was first shown
    (plus a little slack for clock skew). The estimate is the time since the case was
    shown in this session minus pauses; None when nothing is known.
    """
    now = now or utcnow()
    start = first_shown_at or shown_at
    ceiling = None if start is None else (now - start).total_seconds() * 1000 + SLACK_MS
    value: int | None = None
    try:
        value = int(str(reported).strip()) if str(reported or "").strip() else None
    except ValueError:
        value = None
    if value is not None and value >= 0 and (ceiling is None or value <= ceiling):
        return value
    if shown_at is None:
        return None
    return max(0, round((now - shown_at).total_seconds() * 1000 - paused_s * 1000))
