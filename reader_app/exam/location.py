"""The reader's location step (grounding): check the marker the browser sent.

The viewer (ui/static/viewer.js) keeps one marker per case in stored-image
pixels; the case panel (ui/static/panel.js) sends it inside its one submit value
as ``{"x", "y", "slice"}``, next to the "No focal finding" tick
(``exam.submission`` reads that value). What the browser sends is input:
:func:`location_answer` accepts a point only when it is finite, on the stored
image (``0 <= x <= width``, ``0 <= y <= height``) and, for a strip, on one of
its slices; it returns the ``responses.location_json`` text
(:func:`reader_app.grounding.store.location_json`). Nothing here knows the
reference region: the page never gets it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.submit import AnswerError
from reader_app.exam.windows import group_by_window
from reader_app.grounding.store import location_json
from scoring import Location

MAX_COORDINATE = 1e9  # far past any stored image; a larger number is no coordinate
MISSING = "Mark the finding on the image, or choose “No focal finding”."
OFF_IMAGE = "The marker is not on the image: place it again, or choose “No focal finding”."
BOTH = "Choose one: a marker on the image, or “No focal finding”, not both."


def location_answer(
    sent: object,
    *,
    case: CaseView,
    no_focal_finding: bool,
    required: bool,
) -> str | None:
    """The location to store with this answer, or None when none was given (and none is
    required). A marker for another case (a stale page) counts as none. A marker AND
    "No focal finding" are refused: the screen never shows both (panel.js), and neither
    is ever dropped silently (issue 38)."""
    point = _sent_point(sent, case.public_id)
    if no_focal_finding:
        if point is not None:
            raise AnswerError(BOTH, field="location")
        return location_json(None, no_focal_finding=True)
    if point is None:
        if required:
            raise AnswerError(MISSING, field="location")
        return None
    return location_json(_on_image(point, case))


def _sent_point(sent: object, case_public_id: str) -> Mapping[str, Any] | None:
    """The marker as sent (``{"x", "y", "slice"}``); anything that is no mapping, or a
    mapping naming another case (a stale page), is no marker."""
    if not isinstance(sent, Mapping):
        return None
    if "case" in sent and sent.get("case") != case_public_id:
        return None
    return sent


def _on_image(point: Mapping[str, Any], case: CaseView) -> Location:
    """The point as a Location, or AnswerError when it is not on the case's stored image."""
    x: Any = point.get("x")
    y: Any = point.get("y")
    slice_no: Any = point.get("slice")
    if not (_number(x) and _number(y)):
        raise AnswerError(OFF_IMAGE, field="location")
    frames = _frames(case)
    if case.kind == "strip" and len(frames) > 1:
        if not _whole(slice_no) or not 1 <= slice_no <= len(frames):
            raise AnswerError(OFF_IMAGE, field="location")
        image = frames[slice_no - 1]
    else:
        if slice_no is not None or not frames:
            raise AnswerError(OFF_IMAGE, field="location")
        image = frames[0]
    if not (0 <= x <= image.width and 0 <= y <= image.height):
        raise AnswerError(OFF_IMAGE, field="location")
    return Location(x=float(x), y=float(y), slice=slice_no)


def _frames(case: CaseView) -> list[ImageView]:
    """The images a marker can sit on: the first window's (every window has the same
    geometry; a strip's slices are numbered as the viewer numbers them)."""
    groups = group_by_window(case.reader_images)
    return next(iter(groups.values()), [])


def _number(value: object) -> bool:
    """A finite number of a sane size (a 400-digit integer is no coordinate, and would
    overflow a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return abs(value) <= MAX_COORDINATE
    return math.isfinite(value) and abs(value) <= MAX_COORDINATE


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
