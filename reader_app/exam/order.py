"""Per-reader case order: practice cases first, then a seeded shuffle, stored once.

The seed is stored with every slot, so an order can be re-drawn and checked
(:func:`reproduce_order`). How many practice cases a reader gets comes from
the study's ``practice_count``; the manifest says which cases are practice.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import case as sql_case
from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.models import Case, CaseImage, Reader, ReaderOrder, Study
from reader_app.study.config import study_settings


@dataclass(frozen=True)
class OrderSummary:
    total: int  # slots, practice included
    practice: int  # the first ``practice`` slots are practice cases
    seed: int | None

    @property
    def scored(self) -> int:
        return self.total - self.practice


def draw_order(
    case_ids_practice: list[int],
    case_ids_scored: list[int],
    seed: int,
    images: Mapping[int, frozenset[str]] | None = None,
) -> list[int]:
    """Deterministic given the seed, so an order can be reproduced from the stored seed.

    With ``images`` (case id -> sha256 of its pictures), no two cases that show a
    common picture follow each other where the cases allow it: a reader should
    not meet the same image twice in a row (say, as a diagnosis and as a report case).
    """
    shuffled = list(case_ids_scored)
    random.Random(seed).shuffle(shuffled)
    order = list(case_ids_practice) + shuffled
    if images:
        _separate(order, len(case_ids_practice), images)
    return order


def _separate(order: list[int], start: int, images: Mapping[int, frozenset[str]]) -> None:
    """Move a scored case that shares a picture with the one before it (in place):
    swap in the next case that does not, or else move it back to the first gap
    where it meets neither neighbour. Practice slots before ``start`` stay put."""
    empty: frozenset[str] = frozenset()

    def clash(a: int, b: int) -> bool:
        return bool(images.get(a, empty) & images.get(b, empty))

    i, moves = max(start, 1), 0
    while i < len(order) and moves <= len(order):
        if not clash(order[i - 1], order[i]):
            i += 1
            continue
        later = next(
            (j for j in range(i + 1, len(order)) if not clash(order[i - 1], order[j])), None
        )
        if later is not None:
            order[i], order[later] = order[later], order[i]
            i += 1
            continue
        gap = next(
            (
                k
                for k in range(start, i)
                if not clash(order[i], order[k])
                and (k == start or not clash(order[k - 1], order[i]))
            ),
            None,
        )
        if gap is None:
            i += 1  # nowhere to go: the cases leave no choice
            continue
        order.insert(gap, order.pop(i))
        moves += 1  # slot i now holds the next case: check it against its new neighbour


def _images(session: Session, study_id: int) -> dict[int, frozenset[str]]:
    """Case id -> the sha256 of each of its pictures."""
    found: dict[int, set[str]] = {}
    rows = session.exec(
        select(CaseImage.case_id, CaseImage.sha256)
        .join(Case, col(Case.id) == CaseImage.case_id)
        .where(Case.study_id == study_id)
    )
    for case_id, digest in rows:
        found.setdefault(case_id, set()).add(digest)
    return {cid: frozenset(d) for cid, d in found.items()}


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
    limit = study_settings(study).practice_count
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
    order = draw_order(practice, scored, seed, _images(session, reader.study_id))
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
    return draw_order(practice, scored, summary.seed, _images(session, reader.study_id))


def _count(session: Session, reader_id: int) -> int:
    return int(
        session.exec(
            select(func.count()).select_from(ReaderOrder).where(ReaderOrder.reader_id == reader_id)
        ).one()
    )
