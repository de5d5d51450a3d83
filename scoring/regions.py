"""Reference regions and locations (SCORING.md section 8): parsing and the hit test.

A region is a box (x, y, w, h) in the stored image's pixels, on one slice of a
strip or on a spot image (slice None), or a boolean mask. A location is one
point (slice, x, y) in the same pixels, or None for "no focal finding".
A box covers the half-open pixel span [x, x + w) x [y, y + h); growing it by
the study's tolerance t makes that [x - t, x + w + t) x [y - t, y + h + t).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]


class RegionError(ValueError):
    """A reference region or location that cannot be read; the message says why."""


@dataclass(frozen=True)
class Box:
    """A reference box in stored-image pixels; ``slice`` is 1-based, None on a spot image."""

    x: float
    y: float
    w: float
    h: float
    slice: int | None = None


@dataclass(frozen=True)
class Location:
    """A responder's point in stored-image pixels; ``slice`` is 1-based, None on a spot image."""

    x: float
    y: float
    slice: int | None = None


def _number(text: str, what: str, source: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise RegionError(f"{what} {text.strip()!r} in {source!r} is not a number") from None
    if not math.isfinite(value):
        raise RegionError(f"{what} in {source!r} must be finite")
    return value


def parse_region(text: str) -> tuple[Box, ...]:
    """``x,y,w,h`` or ``slice:x,y,w,h``, several separated by ``;``.

    Width and height must be positive, x and y non-negative, a slice a whole
    number >= 1. Empty text means no region: an empty tuple.
    """
    boxes = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        slice_no: int | None = None
        coords = part
        if ":" in part:
            head, coords = part.split(":", 1)
            if not head.strip().isdigit() or int(head) < 1:
                raise RegionError(f"slice {head.strip()!r} in {part!r} must be a whole number >= 1")
            slice_no = int(head)
        values = coords.split(",")
        if len(values) != 4:
            raise RegionError(f"region {part!r} must be x,y,w,h (4 numbers), got {len(values)}")
        x, y, w, h = (_number(v, n, part) for v, n in zip(values, "xywh", strict=True))
        if x < 0 or y < 0:
            raise RegionError(f"region {part!r}: x and y must be >= 0")
        if w <= 0 or h <= 0:
            raise RegionError(f"region {part!r}: w and h must be > 0")
        boxes.append(Box(x=x, y=y, w=w, h=h, slice=slice_no))
    return tuple(boxes)


def format_region(boxes: tuple[Box, ...]) -> str:
    """The inverse of ``parse_region`` (numbers in their shortest form)."""

    def num(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else repr(v)

    parts = []
    for b in boxes:
        coords = ",".join(num(v) for v in (b.x, b.y, b.w, b.h))
        parts.append(coords if b.slice is None else f"{b.slice}:{coords}")
    return ";".join(parts)


def box_hit(location: Location | None, boxes: tuple[Box, ...], tolerance: float = 0.0) -> bool:
    """Whether the point lies in a box on its own slice, each box grown by ``tolerance``."""
    if location is None:
        return False
    if tolerance < 0:
        raise RegionError(f"tolerance must be >= 0, got {tolerance}")
    for b in boxes:
        if b.slice != location.slice:
            continue
        if (
            b.x - tolerance <= location.x < b.x + b.w + tolerance
            and b.y - tolerance <= location.y < b.y + b.h + tolerance
        ):
            return True
    return False


def mask_hit(location: Location | None, mask: BoolArray, tolerance: int = 0) -> bool:
    """Whether the point's pixel, or one within ``tolerance`` pixels (Chebyshev), is in the mask.

    ``mask`` is (rows, cols) for a spot image or (slices, rows, cols) for a
    strip, slice k + 1 at index k.
    """
    if location is None:
        return False
    if tolerance < 0:
        raise RegionError(f"tolerance must be >= 0, got {tolerance}")
    plane: BoolArray
    if mask.ndim == 3:
        if location.slice is None or not 1 <= location.slice <= mask.shape[0]:
            return False
        plane = mask[location.slice - 1]
    elif mask.ndim == 2:
        if location.slice is not None:
            return False
        plane = mask
    else:
        raise RegionError(f"a mask must have 2 or 3 dimensions, got {mask.ndim}")
    col, row = math.floor(location.x), math.floor(location.y)
    rows, cols = plane.shape
    r0, r1 = max(row - tolerance, 0), min(row + tolerance + 1, rows)
    c0, c1 = max(col - tolerance, 0), min(col + tolerance + 1, cols)
    if r0 >= r1 or c0 >= c1:
        return False
    return bool(plane[r0:r1, c0:c1].any())
