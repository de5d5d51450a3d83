"""What a reader sees next: the first unanswered case in their stored order.

The lookup is two indexed queries whatever the number of answers so far, so
showing case 200 costs what showing case 1 costs.
"""

from __future__ import annotations

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


def next_case(*, session: Session, reader: Reader, total: int | None = None) -> CaseView | None:
    """The first slot with no response, or None when the reader is done."""
    assert reader.id is not None
    row = session.exec(
        select(ReaderOrder.slot, Case)
        .join(Case, col(Case.id) == ReaderOrder.case_id)
        .outerjoin(
            Response,
            and_(
                col(Response.reader_id) == ReaderOrder.reader_id, col(Response.case_id) == Case.id
            ),
        )
        .where(ReaderOrder.reader_id == reader.id, col(Response.id).is_(None))
        .order_by(col(ReaderOrder.slot))
        .limit(1)
    ).first()
    if row is None:
        return None
    slot, case = row
    return case_view(
        session=session,
        case=case,
        slot=slot,
        total=total or order_length(session=session, reader_id=reader.id),
    )


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
    return CaseView(
        public_id=case.public_id,
        kind=case.kind,
        practice=case.practice,
        history=case.history,
        slot=slot,
        total=total,
        images=tuple(
            ImageView(i.sha256, i.label, i.window, i.role, i.width, i.height) for i in images
        ),
    )
