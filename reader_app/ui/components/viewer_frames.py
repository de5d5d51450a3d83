"""What the viewer needs per window preset: its frames (strip slices or spot images).

A strip's slices carry ingest's labels (``"7/16 · z = -143.5 mm"``); a spot
case with several images per window gets ``"Image 2/3"``. The viewer steps
through a window's frames with the wheel, the arrow keys and the thumbnails,
and keeps the frame number when the window changes.

What the viewer needs for readings in real units, and nothing else from the source:
``hu``, a window's width and centre in Hounsfield units when it is one of the named
HU presets (``WINDOW_PRESETS``: the 8-bit render mapped exactly that HU window to
0-255, so a grey level is an HU value, to within a step of width/255); ``mm``, a
frame's millimetres per stored pixel (x, y) when ingest knew the spacing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.windows import default_window, group_by_window, window_label
from reader_app.study.window_presets import WINDOW_PRESETS
from reader_app.ui.components.image_urls import image_url


class Frame(TypedDict):
    url: str
    sha256: str
    label: str
    w: int
    h: int
    mm: list[float] | None  # (x, y) mm per stored pixel, or None
    values: str | None  # the URL of its original values (render.encode_values), or None


class HuWindow(TypedDict):
    width: float
    center: float


class WindowFrames(TypedDict):
    name: str
    label: str
    images: list[Frame]
    hu: HuWindow | None


def hu_window(name: str) -> HuWindow | None:
    """The HU window grey levels 0-255 stand for, for a named HU preset; else None (the
    file's own window may not be HU, the full range's depends on the pixels)."""
    preset = WINDOW_PRESETS.get(name)
    return None if preset is None else {"width": preset.width, "center": preset.center}


def frame_label(case: CaseView, img: ImageView, index: int, count: int) -> str:
    if case.kind == "strip" and img.label:
        return img.label
    return f"Image {index + 1}/{count}" if count > 1 else (img.label or "")


def window_frames(case: CaseView, *, original_values: bool = False) -> list[WindowFrames]:
    """Every window preset of the case, in the stored (manifest) order, with its frames.
    ``original_values`` (the study option): each frame's original values too, when ingest
    stored them; off, the browser is never given them."""
    out: list[WindowFrames] = []
    for name, images in group_by_window(case.reader_images).items():
        frames: list[Frame] = [
            {
                "url": image_url(img.sha256),
                "sha256": img.sha256,
                "label": frame_label(case, img, i, len(images)),
                "w": img.width,
                "h": img.height,
                "mm": None if img.pixel_mm is None else list(img.pixel_mm),
                "values": image_url(img.values_sha256)
                if original_values and img.values_sha256
                else None,
            }
            for i, img in enumerate(images)
        ]
        out.append(
            {"name": name, "label": window_label(name), "images": frames, "hu": hu_window(name)}
        )
    return out


def start_window(frames: Sequence[WindowFrames]) -> int:
    """Index of the window the case opens on (``windows.default_window``)."""
    names = [w["name"] for w in frames]
    return names.index(default_window(names)) if names else 0
