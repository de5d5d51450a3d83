"""Per-reader case order: practice cases first, then a seeded shuffle, stored once."""

from __future__ import annotations

import random
import secrets

from sqlmodel import Session, col, select

from reader_app.models import Case, Reader, ReaderOrder


def draw_order(case_ids_practice: list[int], case_ids_scored: list[int], seed: int) -> list[int]:
    """Deterministic given the seed, so an order can be reproduced from the stored seed."""
    shuffled = list(case_ids_scored)
    random.Random(seed).shuffle(shuffled)
    return list(case_ids_practice) + shuffled


def ensure_order(*, session: Session, reader: Reader, seed: int | None = None) -> int:
    """Create the reader's order if it does not exist yet; return its length.

    Safe against two tabs racing: the primary key (reader, slot) lets only one
    insert win, and the loser reads the winner's rows.
    """
    assert reader.id is not None
    existing = session.exec(
        select(ReaderOrder.slot).where(ReaderOrder.reader_id == reader.id).limit(1)
    ).first()
    if existing is not None:
        return _count(session, reader.id)
    cases = session.exec(
        select(Case.id, Case.practice)
        .where(Case.study_id == reader.study_id)
        .order_by(col(Case.position), col(Case.id))
    ).all()
    practice = [cid for cid, is_practice in cases if is_practice and cid is not None]
    scored = [cid for cid, is_practice in cases if not is_practice and cid is not None]
    seed = secrets.randbits(31) if seed is None else seed
    order = draw_order(practice, scored, seed)
    session.add_all(
        ReaderOrder(reader_id=reader.id, slot=slot, case_id=cid, seed=seed)
        for slot, cid in enumerate(order)
    )
    try:
        session.commit()
    except Exception:
        session.rollback()
        if _count(session, reader.id) == 0:
            raise
    return _count(session, reader.id)


def _count(session: Session, reader_id: int) -> int:
    from sqlalchemy import func

    return int(
        session.exec(
            select(func.count()).select_from(ReaderOrder).where(ReaderOrder.reader_id == reader_id)
        ).one()
    )
