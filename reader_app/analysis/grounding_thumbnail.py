"""A case image with its reference region and every responder's marker, as a PNG.

Drawn server-side with Pillow, so the page shows a plain image and the same
function is testable pixel by pixel. Coordinates are the stored image's
pixels (as the answer key and the locations are); the image is scaled to
``max_side`` on its longer side and everything with it. The region is a
green outline (a box, or a mask's contour); readers are blue discs, model runs
orange diamonds, hollow when the run was sent no image. A legend strip under
the image names them. For analysts only: the region is ground truth.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from scoring import BoolArray, Box

THUMB_PX: Final = 512
REGION: Final = (0, 220, 90)  # green: the reference region
GROWN: Final = (150, 235, 170)  # light green: the box grown by the tolerance
HUMAN: Final = (40, 150, 255)  # blue family, as humans in the charts
MODEL: Final = (255, 130, 20)  # orange family, as models in the charts
OUTLINE: Final = (0, 0, 0)
LEGEND_PX: Final = 24
MARKER_R: Final = 6


@dataclass(frozen=True)
class Marker:
    """One responder's point on the drawn slice, in stored-image pixels."""

    x: float
    y: float
    kind: str  # human | model
    text_only: bool = False


def _scaled_box(box: Box, scale: float, grow: float = 0.0) -> tuple[int, int, int, int]:
    """The pixels covering [x - grow, x + w + grow) x [y - grow, y + h + grow), scaled."""
    x0 = math.floor((box.x - grow) * scale)
    y0 = math.floor((box.y - grow) * scale)
    x1 = math.ceil((box.x + box.w + grow) * scale) - 1
    y1 = math.ceil((box.y + box.h + grow) * scale) - 1
    return x0, y0, max(x0, x1), max(y0, y1)


def _contour(plane: BoolArray, scale: float) -> Image.Image:
    """A mask's edge pixels at ``scale``: the mask minus its 3x3 erosion."""
    rows, cols = plane.shape
    size = (max(1, round(cols * scale)), max(1, round(rows * scale)))
    mask = Image.fromarray(plane.astype(np.uint8) * 255, mode="L")
    mask = mask.resize(size, Image.Resampling.NEAREST)
    inner = mask.filter(ImageFilter.MinFilter(3))
    edge = np.asarray(mask, dtype=np.uint8) > np.asarray(inner, dtype=np.uint8)
    return Image.fromarray(edge.astype(np.uint8) * 255, mode="L")


def _marker(draw: ImageDraw.ImageDraw, m: Marker, scale: float) -> None:
    cx, cy, r = m.x * scale, m.y * scale, MARKER_R
    if m.kind == "human":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=HUMAN, outline=OUTLINE, width=1)
        return
    diamond = [(cx, cy - r - 1), (cx + r + 1, cy), (cx, cy + r + 1), (cx - r - 1, cy)]
    if m.text_only:
        draw.polygon(diamond, outline=MODEL, width=2)
    else:
        draw.polygon(diamond, fill=MODEL, outline=OUTLINE, width=1)


def _legend(width: int, kinds: set[str], text_only: bool) -> Image.Image:
    strip = Image.new("RGB", (width, LEGEND_PX), (250, 250, 250))
    draw = ImageDraw.Draw(strip)
    font = ImageFont.load_default()
    x, cy = 6, LEGEND_PX // 2
    entries: list[tuple[str, str]] = [("region", "reference region")]
    entries += [("human", "reader")] if "human" in kinds else []
    entries += [("model", "model run")] if "model" in kinds else []
    entries += [("text", "text-only run")] if text_only else []
    for what, label in entries:
        if what == "region":
            draw.rectangle((x, cy - 5, x + 12, cy + 5), outline=REGION, width=2)
        else:
            m = Marker(x + 6, cy, "human" if what == "human" else "model", what == "text")
            _marker(draw, m, 1.0)
        draw.text((x + 18, cy), label, fill=(30, 30, 30), font=font, anchor="lm")
        x += 18 + int(draw.textlength(label, font=font)) + 16
    return strip


def draw_grounding(
    png: bytes,
    *,
    boxes: Sequence[Box] = (),
    mask: BoolArray | None = None,
    markers: Sequence[Marker] = (),
    tolerance: float = 0.0,
    max_side: int = THUMB_PX,
) -> bytes:
    """``png`` scaled to ``max_side`` with the boxes (and, with a tolerance, the grown
    boxes), the mask's contour (a 2-D plane of the image's size) and the markers;
    a legend strip below. Boxes and markers are on this image already (the caller
    picks the slice)."""
    with Image.open(io.BytesIO(png)) as src:
        image = src.convert("RGB")
    scale = max_side / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    image = image.resize(size, Image.Resampling.BILINEAR)
    draw = ImageDraw.Draw(image)
    if mask is not None and mask.any():
        edge = _contour(mask, scale)  # the mask's own pixels, whatever its size
        image.paste(Image.new("RGB", edge.size, REGION), (0, 0), edge)
    for box in boxes:
        if tolerance > 0:
            draw.rectangle(_scaled_box(box, scale, tolerance), outline=GROWN, width=1)
        draw.rectangle(_scaled_box(box, scale), outline=REGION, width=2)
    for m in markers:
        _marker(draw, m, scale)
    legend = _legend(size[0], {m.kind for m in markers}, any(m.text_only for m in markers))
    out = Image.new("RGB", (size[0], size[1] + LEGEND_PX), (250, 250, 250))
    out.paste(image, (0, 0))
    out.paste(legend, (0, size[1]))
    buf = io.BytesIO()
    out.save(buf, format="PNG", optimize=True)
    return buf.getvalue()
