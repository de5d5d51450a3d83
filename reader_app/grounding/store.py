"""How grounding data is stored: a responder's location and a reference mask.

``responses.location_json`` holds one of
    {"x": 120.5, "y": 88.0, "slice": null}   a point on a spot image (stored pixels)
    {"x": 40.0, "y": 61.5, "slice": 3}       a point on slice 3 (1-based) of a strip
    {"no_focal_finding": true}               the responder says there is none
and NULL when no location was given. ``answer_keys.reference_mask`` holds a
boolean mask, (rows, cols) for a spot or (slices, rows, cols) for a strip, as
``encode_mask`` writes it. The hit test itself is pure: ``scoring.regions``.
"""

from __future__ import annotations

import io
import json
import math
from typing import Any, Final

import numpy as np

from scoring import BoolArray, Location, RegionError

NO_FOCAL_FINDING: Final = {"no_focal_finding": True}
MAX_MASK_VOXELS: Final = 64 * 2048 * 2048  # a strip of 64 slices at 2048 px; bigger is refused


def location_json(location: Location | None, *, no_focal_finding: bool = False) -> str | None:
    """The column's text for a point, for "no focal finding", or None for nothing given."""
    if no_focal_finding:
        return json.dumps(NO_FOCAL_FINDING)
    if location is None:
        return None
    if not (math.isfinite(location.x) and math.isfinite(location.y)):
        raise RegionError("a location's x and y must be finite")
    if location.x < 0 or location.y < 0:
        raise RegionError("a location's x and y must be >= 0")
    if location.slice is not None and location.slice < 1:
        raise RegionError("a location's slice is 1-based")
    x, y = round(float(location.x), 2), round(float(location.y), 2)
    return json.dumps({"x": x, "y": y, "slice": location.slice})


def parse_location_json(text: str | None) -> tuple[Location | None, bool]:
    """``(point or None, no_focal_finding)`` from the column; a malformed value is no location."""
    if not text:
        return None, False
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None, False
    if not isinstance(data, dict):
        return None, False
    if data.get("no_focal_finding") is True:
        return None, True
    x, y, slice_no = data.get("x"), data.get("y"), data.get("slice")
    if not (_finite(x) and _finite(y)):
        return None, False
    if slice_no is not None and (not isinstance(slice_no, int) or isinstance(slice_no, bool)):
        return None, False
    return Location(x=float(x or 0), y=float(y or 0), slice=slice_no), False


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def encode_mask(mask: BoolArray) -> bytes:
    """A compressed .npy of the boolean mask (a few KB for a typical lesion)."""
    if mask.ndim not in (2, 3):
        raise RegionError(f"a mask must have 2 or 3 dimensions, got {mask.ndim}")
    if mask.size > MAX_MASK_VOXELS:
        raise RegionError(f"a mask of {mask.size} pixels is over the limit of {MAX_MASK_VOXELS}")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, mask=np.ascontiguousarray(mask, dtype=np.bool_))
    return buffer.getvalue()


def decode_mask(data: bytes) -> BoolArray:
    """The mask ``encode_mask`` stored (no pickles are ever loaded)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        mask: BoolArray = archive["mask"]
    if mask.dtype != np.bool_ or mask.ndim not in (2, 3):
        raise RegionError("a stored mask must be a 2-D or 3-D boolean array")
    return mask
