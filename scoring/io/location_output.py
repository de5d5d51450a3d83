"""Total and bounded reading of the ``location`` a grounded prompt asks a model for.

The grounded prompt (``reader_app/prompts/radle_grounded_v1.txt``) asks for
``"location": {"slice": k, "x": u, "y": v}`` beside the diagnosis:

- ``x`` and ``y`` are fractions of the width and height of the image as sent,
  ``(0, 0)`` its top-left corner and ``(1, 1)`` its bottom-right corner;
- ``slice`` counts the images in the order they were sent, from 1 (null or
  left out when the case has one image);
- ``"location": null`` (or a "no focal finding" string) says there is none.

A reply yields one ``ParsedLocation``: ``absent`` (no location key, or a reply
too long to read), ``none`` (no focal finding), ``point`` or ``invalid`` (a
location is there but cannot be used; ``error`` says why). A coordinate up to
``OVERSHOOT`` outside [0, 1] is clamped to the edge (``clamped``): models write
1.002 for "at the border". Anything further out is invalid, never rescaled: a
model answering in pixels has not followed the prompt, and guessing the scale
would invent a location.

Bounds are ``model_output``'s: the same ``json_objects`` search (linear, depth
and number limits) and the same ``MAX_REPLY_CHARS`` cap; numeric strings
longer than ``MAX_NUMBER_TEXT`` are not converted. The parser never raises.
Mapping a point to stored-image pixels is the runner's
(``reader_app.runs.grounded``): it knows which images were sent.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scoring.io.model_output import MAX_NUMBER_DIGITS, MAX_REPLY_CHARS, fenced_blocks, json_objects

LOCATION_KEY: Final = "location"
SLICE_KEYS: Final = ("slice", "image")
OVERSHOOT: Final = 0.01
MAX_NUMBER_TEXT: Final = 32
NO_FOCAL_FINDING_TEXTS: Final = frozenset(
    {"no focal finding", "none", "no finding", "not applicable", "n/a", "null"}
)
KINDS: Final = ("absent", "none", "point", "invalid")


@dataclass(frozen=True)
class ParsedLocation:
    """A model's location: ``kind`` is absent, none, point or invalid.

    For a point, ``x`` and ``y`` are in [0, 1] of the image as sent and
    ``slice`` is the 1-based number of that image (None when not given).
    """

    kind: str
    x: float | None = None
    y: float | None = None
    slice: int | None = None
    error: str | None = None
    clamped: bool = False


ABSENT: Final = ParsedLocation("absent")
NO_FOCAL_FINDING: Final = ParsedLocation("none")


def _invalid(error: str) -> ParsedLocation:
    return ParsedLocation("invalid", error=error)


def _fraction(value: Any) -> float | None:
    """A finite number from 0.42 or "0.42"; None for anything else (bools, text, huge strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if len(value) > MAX_NUMBER_TEXT:
            return None
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _slice_number(value: Any) -> int | None:
    """A whole number from 3, 3.0 or "3" (at most MAX_NUMBER_DIGITS digits); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text.isdigit() or len(text) > MAX_NUMBER_DIGITS:
            return None
        return int(text)
    if isinstance(value, numbers.Integral):
        return int(value) if abs(int(value)) < 10**MAX_NUMBER_DIGITS else None
    if isinstance(value, float) and value.is_integer() and abs(value) < 10**MAX_NUMBER_DIGITS:
        return int(value)
    return None


def _clamp(value: float) -> tuple[float | None, bool]:
    """(value in [0, 1], clamped?) or (None, False) when it is further out than OVERSHOOT."""
    if 0.0 <= value <= 1.0:
        return value, False
    if -OVERSHOOT <= value < 0.0:
        return 0.0, True
    if 1.0 < value <= 1.0 + OVERSHOOT:
        return 1.0, True
    return None, False


def location_from_value(value: Any, *, n_images: int | None = None) -> ParsedLocation:
    """The location from the value of a ``location`` key (``n_images``: how many were sent)."""
    if value is None:
        return NO_FOCAL_FINDING
    if isinstance(value, str):
        if value.strip().strip(".").lower() in NO_FOCAL_FINDING_TEXTS:
            return NO_FOCAL_FINDING
        return _invalid("location is text, not an object with slice, x and y")
    if not isinstance(value, Mapping):
        return _invalid("location is not an object with slice, x and y")
    fields = {str(k).strip().lower(): v for k, v in value.items()}
    if fields.get("no_focal_finding") is True:
        return NO_FOCAL_FINDING
    point: dict[str, float] = {}
    clamped = False
    for axis in ("x", "y"):
        if axis not in fields:
            return _invalid(f"location has no {axis}")
        number = _fraction(fields[axis])
        if number is None:
            return _invalid(f"location {axis} is not a finite number")
        inside, was_clamped = _clamp(number)
        if inside is None:
            return _invalid(f"location {axis} = {number:.6g} is outside [0, 1]")
        point[axis], clamped = inside, clamped or was_clamped
    raw_slice = next((fields[k] for k in SLICE_KEYS if k in fields), None)
    slice_no: int | None = None
    if raw_slice is not None:
        slice_no = _slice_number(raw_slice)
        if slice_no is None or slice_no < 1:
            return _invalid("location slice is not a whole number >= 1")
        if n_images is not None and slice_no > n_images:
            return _invalid(f"location slice {slice_no} is past the {n_images} image(s) sent")
    return ParsedLocation("point", point["x"], point["y"], slice_no, clamped=clamped)


def parse_location_output(text: Any, *, n_images: int | None = None) -> ParsedLocation:
    """The location in a raw reply: the first JSON object with a ``location`` key decides."""
    try:
        return _parse(text, n_images)
    except Exception:  # totality: a parser bug must not stop a run
        return ABSENT


def _parse(text: Any, n_images: int | None) -> ParsedLocation:
    if not isinstance(text, str) or len(text) > MAX_REPLY_CHARS or not text.strip():
        return ABSENT
    body = text.strip()
    for candidate in [*fenced_blocks(body), body]:
        for obj in json_objects(candidate):
            for key, value in obj.items():
                if str(key).strip().lower() == LOCATION_KEY:
                    return location_from_value(value, n_images=n_images)
    return ABSENT
