"""The interventions of SCORING.md section 9 on one stored PNG: pure pixel work.

A region is the set of the image's pixels a reference covers on that image:
every pixel a box (grown by the tolerance) touches, and the mask's pixels;
on a strip, slice j's region is its boxes and mask plane j. ``occlude`` sets
those pixels to the fill and leaves every other pixel as it was; the
irrelevant region is the same shape moved, by ``seed``, to a place fully
inside the image that shares no pixel with the reference region.
"""

from __future__ import annotations

import hashlib
import io
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from PIL import Image

from reader_app.core.errors import ReaderStudyError
from reader_app.grounding.hits import Reference
from scoring import BoolArray

FILLS: Final = ("median", "black")
_TRIES: Final = 2000  # random placements tried before the exhaustive scan

Pixels = npt.NDArray[np.uint8]


class NoRoomError(ReaderStudyError, ValueError):
    """The image has no place for the shape outside the reference region."""


def region_plane(
    reference: Reference, slice_no: int | None, shape: tuple[int, int], tolerance: float
) -> BoolArray:
    """The pixels (rows, cols) the reference covers on the image of ``slice_no``."""
    rows, cols = shape
    plane = np.zeros(shape, dtype=np.bool_)
    for b in reference.boxes:
        if b.slice != slice_no:
            continue
        x0, y0 = max(0, math.floor(b.x - tolerance)), max(0, math.floor(b.y - tolerance))
        x1 = min(cols, math.ceil(b.x + b.w + tolerance))
        y1 = min(rows, math.ceil(b.y + b.h + tolerance))
        plane[y0:y1, x0:x1] = True
    mask = reference.mask
    if mask is not None:
        if mask.ndim == 2 and slice_no is None:
            part = mask
        elif mask.ndim == 3 and slice_no is not None and 1 <= slice_no <= mask.shape[0]:
            part = mask[slice_no - 1]
        else:
            part = None
        if part is not None and part.shape == shape:
            plane |= part
    return plane


def decode(png: bytes) -> Pixels:
    with Image.open(io.BytesIO(png)) as opened:
        opened.load()
        img: Image.Image = opened if opened.mode in ("L", "RGB") else opened.convert("RGB")
        return np.array(img, dtype=np.uint8)


def encode(pixels: Pixels) -> bytes:
    """A metadata-free PNG: the same pixels always give the same bytes (and sha256)."""
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def fill_value(pixels: Pixels, region: BoolArray, fill: str) -> npt.NDArray[np.uint8]:
    """``median``: the median of the pixels outside the region (per channel); ``black``: 0."""
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    if fill == "black":
        return np.zeros(channels, dtype=np.uint8)
    if fill != "median":
        raise ValueError(f"fill must be one of {FILLS}, not {fill!r}")
    outside = pixels[~region].reshape(-1, channels)
    if outside.size == 0:  # the region is the whole image
        outside = pixels.reshape(-1, channels)
    value: npt.NDArray[np.uint8] = np.asarray(np.round(np.median(outside, axis=0)), dtype=np.uint8)
    return value


def occlude(pixels: Pixels, area: BoolArray, value: npt.NDArray[np.uint8]) -> Pixels:
    out = pixels.copy()
    out[area] = value if pixels.ndim == 3 else value[0]
    return out


def _rng(seed: int, slice_no: int | None, case_key: str = "") -> np.random.Generator:
    entropy = [seed, 0 if slice_no is None else slice_no]
    if case_key:  # each case its own draw, the same whatever the database
        digest = hashlib.sha256(case_key.encode("utf-8")).digest()
        entropy.append(int.from_bytes(digest[:4], "big"))
    return np.random.default_rng(entropy)


def irrelevant_area(
    region: BoolArray, seed: int, slice_no: int | None = None, case_key: str = ""
) -> BoolArray:
    """The region's shape, moved by ``seed`` to lie inside the image off the region.

    The draw depends on the seed, the slice and the case (``case_key``, its manifest
    id: without it, same-sized images would put the region at the same place on
    most cases), so the same slice under several windows gets the same place.
    Raises NoRoomError if there is none.
    """
    ys, xs = np.nonzero(region)
    if ys.size == 0:
        return np.zeros_like(region)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    shape = region[y0:y1, x0:x1]
    rows, cols = region.shape
    h, w = y1 - y0, x1 - x0
    if h > rows or w > cols:
        raise NoRoomError("the region is as large as the image")

    def clear(top: int, left: int) -> bool:
        return not bool((region[top : top + h, left : left + w] & shape).any())

    rng = _rng(seed, slice_no, case_key)
    spot: tuple[int, int] | None = None
    for _ in range(_TRIES):
        top, left = int(rng.integers(0, rows - h + 1)), int(rng.integers(0, cols - w + 1))
        if clear(top, left):
            spot = (top, left)
            break
    if spot is None:  # crowded: every place, in an order the seed shuffles
        places = [(t, left) for t in range(rows - h + 1) for left in range(cols - w + 1)]
        for k in rng.permutation(len(places)):
            if clear(*places[int(k)]):
                spot = places[int(k)]
                break
    if spot is None:
        raise NoRoomError(
            f"no place for a {w}x{h} region inside the {cols}x{rows} image off the reference"
        )
    out = np.zeros_like(region)
    out[spot[0] : spot[0] + h, spot[1] : spot[1] + w] = shape
    return out


def area_text(area: BoolArray) -> str:
    """The provenance's region: its bounding box and a digest of its exact pixels."""
    ys, xs = np.nonzero(area)
    if ys.size == 0:
        return ""
    digest = hashlib.sha256(np.packbits(area).tobytes()).hexdigest()[:16]
    box = f"{xs.min()},{ys.min()},{xs.max() - xs.min() + 1},{ys.max() - ys.min() + 1}"
    return f"{box} px={int(area.sum())} sha={digest}"
