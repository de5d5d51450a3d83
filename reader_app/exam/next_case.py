"""What a reader sees next: the first unanswered case in their stored order.

The lookup is two indexed queries whatever the number of answers so far, so
showing case 200 costs what showing case 1 costs. Given ``from_slot`` (the slot
after the one just answered) the first query starts its index range scan there
and reads one or two order rows, instead of walking every answered slot from 0;
without it (a new browser session) the walk happens once. :func:`upcoming` also
returns the case after the next one, in the same two queries, so the page can
send its images to the browser ahead of time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, func
from sqlmodel import Session, col, select

from reader_app.models import Case, CaseImage, Reader, ReaderOrder, Response


@dataclass(frozen=True)
class ImageView:
    sha256: str
    label: str
    window: str | None
    role: str
    width: int
    height: int
    pixel_mm: tuple[float, float] | None = None  # mm per stored pixel (x, y), if known
    values_sha256: str | None = None  # its original values (study option original_values)


def image_mm(image: CaseImage) -> tuple[float, float] | None:
    """A stored image's pixel spacing (x, y) in mm, or None when ingest knew none."""
    if image.pixel_mm_x is None or image.pixel_mm_y is None:
        return None
    return (image.pixel_mm_x, image.pixel_mm_y)


@dataclass(frozen=True)
class CaseView:
    """Everything a reader's page needs, and nothing that reveals source or answer."""

    public_id: str
    kind: str
    practice: bool
    history: str | None
    slot: int
    total: int
    images: tuple[ImageView, ...]

    @property
    def number(self) -> int:
        return self.slot + 1

    @property
    def image_sha256(self) -> list[str]:
        return [img.sha256 for img in self.images]

    @property
    def reader_images(self) -> tuple[ImageView, ...]:
        """What a reader's viewer offers: slices and images; a montage only if alone."""
        shown = tuple(img for img in self.images if img.role != "montage")
        return shown or self.images

    @property
    def reader_sha256(self) -> list[str]:
        """sha256 of the images the reader's viewer offered, in stored order."""
        return [img.sha256 for img in self.reader_images]


def order_length(*, session: Session, reader_id: int) -> int:
    return int(
        session.exec(
            select(func.count()).select_from(ReaderOrder).where(ReaderOrder.reader_id == reader_id)
        ).one()
    )


@dataclass(frozen=True)
class Upcoming:
    case: CaseView | None  # the first unanswered case; None when the reader is done
    following: CaseView | None  # the unanswered case after it, if any


def upcoming(
    *, session: Session, reader: Reader, total: int | None = None, from_slot: int = 0
) -> Upcoming:
    """The first two unanswered slots at or after ``from_slot``, with their images.

    Answers only ever fill a prefix of the order (the page shows nothing but the
    first unanswered case), so the slot after the one just answered is an exact
    hint. Should a hint ever skip an unanswered slot, the reader still cannot
    finish without it: an empty result from a hint is checked again from slot 0.
    """
    assert reader.id is not None
    rows = _unanswered(session, reader.id, from_slot, 2)
    if not rows and from_slot > 0:
        rows = _unanswered(session, reader.id, 0, 2)
    if not rows:
        return Upcoming(None, None)
    total = total or order_length(session=session, reader_id=reader.id)
    images = _images_of(session, [case.id for _, case in rows if case.id is not None])
    views = [_view(case, slot, total, images.get(case.id or 0, [])) for slot, case in rows]
    return Upcoming(views[0], views[1] if len(views) > 1 else None)


def next_case(
    *, session: Session, reader: Reader, total: int | None = None, from_slot: int = 0
) -> CaseView | None:
    """The first slot with no response, or None when the reader is done."""
    return upcoming(session=session, reader=reader, total=total, from_slot=from_slot).case


def _unanswered(
    session: Session, reader_id: int, from_slot: int, limit: int
) -> list[tuple[int, Case]]:
    """An index range scan of the reader's order from ``from_slot``, skipping answered slots."""
    rows = session.exec(
        select(ReaderOrder.slot, Case)
        .join(Case, col(Case.id) == ReaderOrder.case_id)
        .outerjoin(
            Response,
            and_(
                col(Response.reader_id) == ReaderOrder.reader_id, col(Response.case_id) == Case.id
            ),
        )
        .where(
            ReaderOrder.reader_id == reader_id,
            col(ReaderOrder.slot) >= from_slot,
            col(Response.id).is_(None),
        )
        .order_by(col(ReaderOrder.slot))
        .limit(limit)
    ).all()
    return [(slot, case) for slot, case in rows]


def _images_of(session: Session, case_ids: list[int]) -> dict[int, list[CaseImage]]:
    by_case: dict[int, list[CaseImage]] = defaultdict(list)
    for image in session.exec(
        select(CaseImage)
        .where(col(CaseImage.case_id).in_(case_ids))
        .order_by(col(CaseImage.case_id), col(CaseImage.seq))
    ):
        by_case[image.case_id].append(image)
    return by_case


def case_at_slot(*, session: Session, reader: Reader, slot: int, total: int) -> CaseView | None:
    """The case in one slot of the reader's order (for reviewing an earlier answer)."""
    case = session.exec(
        select(Case)
        .join(ReaderOrder, col(ReaderOrder.case_id) == Case.id)
        .where(ReaderOrder.reader_id == reader.id, ReaderOrder.slot == slot)
    ).first()
    if case is None:
        return None
    return case_view(session=session, case=case, slot=slot, total=total)


def case_view(*, session: Session, case: Case, slot: int, total: int) -> CaseView:
    images = session.exec(
        select(CaseImage).where(CaseImage.case_id == case.id).order_by(col(CaseImage.seq))
    ).all()
    return _view(case, slot, total, images)


def _view(case: Case, slot: int, total: int, images: Sequence[CaseImage]) -> CaseView:
    return CaseView(
        public_id=case.public_id,
        kind=case.kind,
        practice=case.practice,
        history=case.history,
        slot=slot,
        total=total,
        images=tuple(
            ImageView(
                i.sha256, i.label, i.window, i.role, i.width, i.height, image_mm(i), i.values_sha256
            )
            for i in images
        ),
    )
