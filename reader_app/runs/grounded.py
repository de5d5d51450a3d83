"""A model's location, normalized to the images it was sent, as a point in stored pixels.

The grounded prompt asks for ``x``, ``y`` in [0, 1] of the image as sent and
``slice`` counting the images sent (``scoring.io.location_output`` reads it).
The runner sends the stored PNGs unchanged, so "as sent" is "as stored"; and a
normalized point would survive a resize that keeps the aspect ratio anyway.

Pixel-edge convention: ``x = u * width`` and ``y = v * height`` of the stored
image. ``u = 0`` is the left edge of pixel column 0 and ``u = 1`` the right edge
of the last column; the centre of column i is ``u = (i + 0.5) / width``. This
is the convention of ``scoring.regions`` (a box covers ``[x, x + w)``).

Slices: on a strip, image k of those sent is slice j of its window's stack,
j counted from 1 in stored order within that window (whatever order the
images were sent in): the numbering of a reference box's ``slice`` and of the
reader's viewer. A spot location has no
slice (image k only gives the width and height). A point on a montage is not
mapped: a tiled picture names no one slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reader_app.exam.next_case import ImageView
from reader_app.grounding.store import location_json
from scoring import Location
from scoring.io import ParsedLocation


def strip_slice_number(stored: Sequence[ImageView], image: ImageView) -> int:
    """The 1-based number of ``image`` in its window's stack of the case's ``stored`` images."""
    stack = [i.sha256 for i in stored if i.window == image.window and i.role != "montage"]
    return stack.index(image.sha256) + 1


def _single_size(images: Sequence[ImageView]) -> bool:
    return len({(i.width, i.height) for i in images}) == 1


def stored_location(
    parsed: ParsedLocation,
    *,
    kind: str,
    images: Sequence[ImageView],
    stored: Sequence[ImageView] | None = None,
) -> tuple[str | None, dict[str, Any]]:
    """``(responses.location_json, meta entries)`` for a parsed location on ``images``
    (as sent, in order); ``stored`` are the case's images in stored order (default:
    ``images``, which the runner sends in stored order).

    The meta keeps the model's own normalized point (``location_normalized``),
    a clamp (``location_clamped``) and why a location was not stored
    (``location_error``); an absent location adds nothing.
    """
    if parsed.kind == "absent":
        return None, {}
    if parsed.kind == "none":
        return location_json(None, no_focal_finding=True), {}
    if parsed.kind != "point" or parsed.x is None or parsed.y is None:
        return None, {"location_error": parsed.error or "location could not be read"}
    meta: dict[str, Any] = {
        "location_normalized": {"slice": parsed.slice, "x": parsed.x, "y": parsed.y}
    }
    if parsed.clamped:
        meta["location_clamped"] = True
    k = parsed.slice
    if k is None:
        if len(images) == 1 or (kind == "spot" and images and _single_size(images)):
            k = 1
        else:
            return None, {**meta, "location_error": f"no slice given for {len(images)} images"}
    if not 1 <= k <= len(images):
        return None, {**meta, "location_error": f"slice {k} is past the {len(images)} image(s)"}
    image = images[k - 1]
    if image.role == "montage":
        return None, {**meta, "location_error": "a point on a montage names no slice"}
    if image.width <= 0 or image.height <= 0:
        return None, {**meta, "location_error": "the image's stored size is unknown"}
    stack = images if stored is None else stored
    if kind == "strip" and image.sha256 not in {i.sha256 for i in stack}:
        return None, {**meta, "location_error": "the image is not one of the case's"}
    point = Location(
        x=parsed.x * image.width,
        y=parsed.y * image.height,
        slice=strip_slice_number(stack, image) if kind == "strip" else None,
    )
    return location_json(point), meta
