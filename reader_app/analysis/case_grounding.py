"""Where each responder looked on one case: the analyst's per-case grounding view.

For a case: its images (a strip's slices in stored order, slice k at index
k - 1, as the viewer numbers them), its reference region (the answer key's
boxes and mask, reader_app.grounding.hits) and every scored response's
location with its hit. ``thumbnails`` draws the slices worth looking at: on
a strip, each slice that carries a region, or the slice with the most markers
when none does; on a spot image, the image. Analysts and coordinators only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlmodel import Session, col, select

from reader_app.analysis.data import ANALYSIS_ROLES
from reader_app.analysis.grounding_thumbnail import THUMB_PX, Marker, draw_grounding
from reader_app.core.auth import require_role
from reader_app.grounding.hits import (
    Reference,
    case_references,
    grounding_tolerance,
    reference_of,
)
from reader_app.grounding.store import parse_location_json
from reader_app.models import AnswerKey, Case, CaseImage, ModelRun, Reader, Response, Study
from scoring import Location


@dataclass(frozen=True)
class ResponderMark:
    responder: str
    kind: str  # human | model
    text_only: bool
    location: Location | None
    no_focal_finding: bool
    hit: bool | None  # None: the case has no reference region


@dataclass(frozen=True)
class CaseGrounding:
    source_id: str
    kind: str  # spot | strip
    images: tuple[CaseImage, ...]  # what the viewer shows, slice k at index k - 1
    reference: Reference | None
    tolerance: float
    marks: tuple[ResponderMark, ...]

    def slice_of(self, slice_no: int | None) -> CaseImage | None:
        if not self.images:
            return None
        if slice_no is None:
            return self.images[0]
        return self.images[slice_no - 1] if 1 <= slice_no <= len(self.images) else None

    def shown_slices(self) -> tuple[int | None, ...]:
        """Slices to draw: those with a region; else the one most markers are on."""
        if self.kind != "strip":
            return (None,)
        if self.reference is not None:
            with_region = tuple(s for s in self.reference.region_slices() if s is not None)
            if with_region:
                return with_region
        counts: dict[int, int] = {}
        for m in self.marks:
            if m.location is not None and m.location.slice is not None:
                counts[m.location.slice] = counts.get(m.location.slice, 0) + 1
        if not counts:
            return (1,)
        return (max(sorted(counts), key=lambda s: counts[s]),)

    def markers_on(self, slice_no: int | None) -> list[Marker]:
        return [
            Marker(m.location.x, m.location.y, m.kind, m.text_only)
            for m in self.marks
            if m.location is not None and m.location.slice == slice_no
        ]


def grounding_case_ids(*, session: Session, study_id: int) -> tuple[str, ...]:
    """Scored cases with a reference region or a located answer: region cases first."""
    refs = case_references(session=session, study_id=study_id)
    located = set(
        session.exec(
            select(Response.case_id).where(
                Response.study_id == study_id,
                col(Response.practice).is_(False),
                col(Response.location_json).is_not(None),
            )
        ).all()
    )
    cases = session.exec(
        select(Case.id, Case.source_id).where(
            Case.study_id == study_id, col(Case.practice).is_(False)
        )
    ).all()
    chosen = [(cid not in refs, str(src)) for cid, src in cases if cid in refs or cid in located]
    return tuple(src for _, src in sorted(chosen))


def case_grounding(*, session: Session, study: Study, source_id: str) -> CaseGrounding | None:
    """One case's images, region and markers (None for an unknown case id)."""
    case = session.exec(
        select(Case).where(Case.study_id == study.id, Case.source_id == source_id)
    ).first()
    if case is None or case.id is None:
        return None
    images = session.exec(
        select(CaseImage)
        .where(CaseImage.case_id == case.id, CaseImage.role != "montage")
        .order_by(col(CaseImage.seq), col(CaseImage.id))
    ).all()
    key = session.exec(select(AnswerKey).where(AnswerKey.case_id == case.id)).first()
    reference = reference_of(key, source_id) if key is not None else None
    if reference is not None and reference.empty:
        reference = None
    tolerance = grounding_tolerance(study)
    readers = {
        r.id: r.code for r in session.exec(select(Reader).where(Reader.study_id == study.id))
    }
    runs = {
        r.id: r for r in session.exec(select(ModelRun).where(ModelRun.study_id == study.id)).all()
    }
    marks = []
    for resp in session.exec(
        select(Response)
        .where(Response.case_id == case.id, col(Response.practice).is_(False))
        .order_by(col(Response.id))
    ).all():
        point, no_focal = parse_location_json(resp.location_json)
        run = runs.get(resp.model_run_id) if resp.reader_id is None else None
        marks.append(
            ResponderMark(
                responder=run.name if run is not None else readers.get(resp.reader_id or 0, "?"),
                kind="human" if run is None else "model",
                text_only=bool(run is not None and run.no_images),
                location=point,
                no_focal_finding=no_focal,
                hit=None if reference is None else reference.hit(point, tolerance),
            )
        )
    return CaseGrounding(
        source_id=source_id,
        kind=case.kind,
        images=tuple(images),
        reference=reference,
        tolerance=tolerance,
        marks=tuple(marks),
    )


def analyst_case_grounding(
    *, session: Session, actor: Reader, source_id: str | None = None
) -> tuple[tuple[str, ...], CaseGrounding | None]:
    """For the analyst's page: the cases worth a thumbnail, and the chosen one (default
    the first). Analysts and coordinators only: the region is ground truth."""
    require_role(actor, *ANALYSIS_ROLES)
    study = session.get(Study, actor.study_id)
    if study is None or study.id is None:
        return (), None
    cases = grounding_case_ids(session=session, study_id=study.id)
    chosen = source_id if source_id in cases else (cases[0] if cases else None)
    if chosen is None:
        return cases, None
    return cases, case_grounding(session=session, study=study, source_id=chosen)


@dataclass(frozen=True)
class Thumbnail:
    slice_no: int | None
    png: bytes
    n_markers: int


def thumbnails(
    view: CaseGrounding, load: Callable[[str], bytes], *, max_side: int = THUMB_PX
) -> list[Thumbnail]:
    """The drawn slices of ``shown_slices``; ``load`` gives an image's PNG by sha256."""
    out = []
    for slice_no in view.shown_slices():
        image = view.slice_of(slice_no)
        if image is None:
            continue
        ref = view.reference
        boxes = tuple(b for b in ref.boxes if b.slice == slice_no) if ref else ()
        plane = None
        if ref is not None and ref.mask is not None:
            if ref.mask.ndim == 2 and slice_no is None:
                plane = ref.mask
            elif ref.mask.ndim == 3 and slice_no is not None and slice_no <= ref.mask.shape[0]:
                plane = ref.mask[slice_no - 1]
        markers = view.markers_on(slice_no)
        png = draw_grounding(
            load(image.sha256),
            boxes=boxes,
            mask=plane,
            markers=markers,
            tolerance=view.tolerance,
            max_side=max_side,
        )
        out.append(Thumbnail(slice_no, png, len(markers)))
    return out
