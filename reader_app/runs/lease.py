"""Leases on (run, case): concurrent runner processes never ask the same case.

A runner claims a case before it sends the request (an INSERT guarded by the
unique constraint on (run, case)); the answer's commit deletes the lease.
Live holders renew their leases; a process killed mid-request leaves its
lease until ``expires_at``, after which another runner takes it over with one
conditional UPDATE (``... WHERE expires_at < now``), which only one process
can win on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from reader_app.models import RunLease, utcnow

DEFAULT_LEASE_S = 60.0


def new_holder() -> str:
    """Who holds a lease: host, process id and a random part (pids are reused)."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def claim(*, session: Session, run_id: int, case_id: int, holder: str, lease_s: float) -> bool:
    """Take the lease on (run, case) if it is free or expired; commits. True if taken."""
    now = utcnow()
    expires = now + timedelta(seconds=lease_s)
    session.add(RunLease(model_run_id=run_id, case_id=case_id, holder=holder, expires_at=expires))
    try:
        session.commit()
        return True
    except IntegrityError:
        session.rollback()
    result = session.execute(
        update(RunLease)
        .where(
            col(RunLease.model_run_id) == run_id,
            col(RunLease.case_id) == case_id,
            col(RunLease.expires_at) < now,
        )
        .values(holder=holder, expires_at=expires)
    )
    session.commit()
    return bool(getattr(result, "rowcount", 0) == 1)


def renew(*, session: Session, run_id: int, holder: str, lease_s: float) -> None:
    """Push back the expiry of every lease this holder has on the run; commits."""
    session.execute(
        update(RunLease)
        .where(col(RunLease.model_run_id) == run_id, col(RunLease.holder) == holder)
        .values(expires_at=utcnow() + timedelta(seconds=lease_s))
    )
    session.commit()


def release(
    *, session: Session, run_id: int, holder: str, case_ids: Iterable[int] | None = None
) -> None:
    """Drop this holder's leases on the run (all, or those cases); the caller commits."""
    stmt = delete(RunLease).where(
        col(RunLease.model_run_id) == run_id, col(RunLease.holder) == holder
    )
    if case_ids is not None:
        stmt = stmt.where(col(RunLease.case_id).in_(list(case_ids)))
    session.execute(stmt)
