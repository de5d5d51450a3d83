"""Which responses point inside the reference region: the app's side of SCORING.md section 8.

The answer key's region (boxes, ``AnswerKey.reference_region``) and mask
(``AnswerKey.reference_mask``) are read once per case; each response's stored
location (``Response.location_json``) is tested against them with the pure
``scoring.regions.box_hit`` / ``mask_hit``, each grown by the study's
``grounding_tolerance_px``. A case counts as grounded when it carries a box or
a mask with at least one pixel; a point inside either is a hit. "No focal
finding", no location, or a point on a slice without a region is a miss.
Whether an IDK or a failure counts is scoring's rule, not this module's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from sqlmodel import Session, col, select

from reader_app.core.errors import ReaderStudyError
from reader_app.grounding.store import decode_mask, parse_location_json
from reader_app.models import AnswerKey, Case, Study
from reader_app.study.config import StudyConfig, stored_config
from scoring import BoolArray, Box, Location, RegionError, box_hit, mask_hit, parse_region

# the tidy frame's grounding columns (reader_app.results), in order
GROUNDING_COLUMNS: Final = ("location_slice", "location_x", "location_y", "no_focal_finding", "hit")


class ReferenceRegionError(ReaderStudyError, ValueError):
    """A stored reference region or mask cannot be read; the message names the case."""


@dataclass(frozen=True)
class Reference:
    """One case's ground-truth region: boxes, a mask, or both."""

    boxes: tuple[Box, ...] = ()
    mask: BoolArray | None = None

    @property
    def empty(self) -> bool:
        return not self.boxes and (self.mask is None or not bool(self.mask.any()))

    def hit(self, location: Location | None, tolerance: float = 0.0) -> bool:
        """Inside a box or the mask, each grown by ``tolerance`` pixels."""
        if box_hit(location, self.boxes, tolerance):
            return True
        # a mask grows by whole pixels: a fraction of one cannot reach the next pixel
        return self.mask is not None and mask_hit(location, self.mask, math.floor(tolerance))

    def region_slices(self) -> tuple[int | None, ...]:
        """The slices (1-based; None on a spot image) that carry a box or mask pixels."""
        found: set[int | None] = {b.slice for b in self.boxes}
        if self.mask is not None:
            if self.mask.ndim == 2:
                if self.mask.any():
                    found.add(None)
            else:
                found |= {k + 1 for k in range(self.mask.shape[0]) if self.mask[k].any()}
        return tuple(sorted(found, key=lambda s: -1 if s is None else s))


def reference_of(key: AnswerKey, source_id: str) -> Reference:
    try:
        boxes = parse_region(key.reference_region or "")
        mask = decode_mask(key.reference_mask) if key.reference_mask else None
    except (RegionError, ValueError, OSError) as exc:
        raise ReferenceRegionError(f"case {source_id}: stored reference region: {exc}") from exc
    return Reference(boxes=boxes, mask=mask)


def case_references(*, session: Session, study_id: int) -> dict[int, Reference]:
    """Case id -> its reference, for every case of the study that carries one."""
    rows = session.exec(
        select(AnswerKey, Case.source_id)
        .join(Case, col(Case.id) == AnswerKey.case_id)
        .where(
            Case.study_id == study_id,
            col(AnswerKey.reference_region).is_not(None)
            | col(AnswerKey.reference_mask).is_not(None),
        )
    ).all()
    refs = {key.case_id: reference_of(key, source_id) for key, source_id in rows}
    return {case_id: ref for case_id, ref in refs.items() if not ref.empty}


def grounding_tolerance(study: Study) -> float:
    """The study's ``grounding_tolerance_px`` (0 when unset or malformed)."""
    return StudyConfig.from_stored(stored_config(study), title=study.title).grounding_tolerance_px


def grounded_case_ids(*, session: Session, study_id: int) -> tuple[str, ...]:
    """Source ids of the non-practice cases that carry a reference region, sorted."""
    refs = case_references(session=session, study_id=study_id)
    if not refs:
        return ()
    rows = session.exec(
        select(Case.id, Case.source_id).where(
            Case.study_id == study_id, col(Case.practice).is_(False)
        )
    ).all()
    return tuple(sorted(str(source) for cid, source in rows if cid in refs))


def location_fields(
    location_json: str | None, reference: Reference | None, tolerance: float
) -> dict[str, object]:
    """One response's grounding columns: where it points, and ``hit`` (1/0; None when
    the case has no reference region, so it is not counted)."""
    point, no_focal = parse_location_json(location_json)
    return {
        "location_slice": None if point is None else point.slice,
        "location_x": None if point is None else point.x,
        "location_y": None if point is None else point.y,
        "no_focal_finding": no_focal,
        "hit": None if reference is None else int(reference.hit(point, tolerance)),
    }
