"""Per-reader case order: practice cases first, then a seeded shuffle, stored once.

The seed is stored with every slot, so an order can be re-drawn and checked
(:func:`reproduce_order`). How many practice cases a reader gets comes from
the study's ``practice_count``; the manifest says which cases are practice.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from sqlalchemy import case as sql_case
from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.exam.config import exam_config
from reader_app.models import Case, Reader, ReaderOrder, Study


@dataclass(frozen=True)
class OrderSummary:
    total: int  # slots, practice included
    practice: int  # the first ``practice`` slots are practice cases
    seed: int | None

    @property
    def scored(self) -> int:
        return self.total - self.practice


def draw_order(case_ids_practice: list[int], case_ids_scored: list[int], seed: int) -> list[int]:
    """Deterministic given the seed, so an order can be reproduced from the stored seed."""
    shuffled = list(case_ids_scored)
    random.Random(seed).shuffle(shuffled)
    return list(case_ids_practice) + shuffled


def _candidates(session: Session, reader: Reader) -> tuple[list[int], list[int]]:
    study = session.get(Study, reader.study_id)
    assert study is not None
    rows = session.exec(
        select(Case.id, Case.practice)
        .where(Case.study_id == reader.study_id)
        .order_by(col(Case.position), col(Case.id))
    ).all()
    practice = [cid for cid, is_practice in rows if is_practice and cid is not None]
    scored = [cid for cid, is_practice in rows if not is_practice and cid is not None]
    limit = exam_config(study).practice_count
    if limit is not None:
        practice = practice[:limit]
    return practice, scored


def ensure_order(*, session: Session, reader: Reader, seed: int | None = None) -> int:
    """Create the reader's order if it does not exist yet; return its length.

    Safe against two tabs racing: the primary key (reader, slot) lets only one
    insert win, and the loser reads the winner's rows.
    """
    assert reader.id is not None
    existing = _count(session, reader.id)
    if existing:
        return existing
    practice, scored = _candidates(session, reader)
    seed = secrets.randbits(31) if seed is None else seed
    order = draw_order(practice, scored, seed)
    session.add_all(
        ReaderOrder(reader_id=reader.id, slot=slot, case_id=cid, seed=seed)
        for slot, cid in enumerate(order)
    )
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        if _count(session, reader.id) == 0:
            raise
    return _count(session, reader.id)


def order_summary(*, session: Session, reader: Reader) -> OrderSummary:
    """Length, practice slots and seed of the stored order, in one query."""
    assert reader.id is not None
    total, practice, seed = session.exec(
        select(
            func.count(),
            func.coalesce(func.sum(sql_case((col(Case.practice).is_(True), 1), else_=0)), 0),
            func.min(ReaderOrder.seed),
        )
        .select_from(ReaderOrder)
        .join(Case, col(Case.id) == ReaderOrder.case_id)
        .where(ReaderOrder.reader_id == reader.id)
    ).one()
    return OrderSummary(total=int(total), practice=int(practice), seed=seed)


def stored_order(*, session: Session, reader: Reader) -> list[int]:
    return list(
        session.exec(
            select(ReaderOrder.case_id)
            .where(ReaderOrder.reader_id == reader.id)
            .order_by(col(ReaderOrder.slot))
        )
    )


def reproduce_order(*, session: Session, reader: Reader) -> list[int]:
    """Re-draw the reader's order from the stored seed and the study's cases."""
    summary = order_summary(session=session, reader=reader)
    if summary.seed is None:
        return []
    practice, scored = _candidates(session, reader)
    return draw_order(practice, scored, summary.seed)


def _count(session: Session, reader_id: int) -> int:
    return int(
        session.exec(
            select(func.count()).select_from(ReaderOrder).where(ReaderOrder.reader_id == reader_id)
        ).one()
    )
