"""What the viewer needs per window preset: its frames (strip slices or spot images).

A strip's slices carry ingest's labels (``"7/16 · z = -143.5 mm"``); a spot
case with several images per window gets ``"Image 2/3"``. The viewer steps
through a window's frames with the wheel, the arrow keys and the thumbnails,
and keeps the frame number when the window changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.windows import default_window, group_by_window, window_label
from reader_app.ui.components.image_urls import image_url


class Frame(TypedDict):
    url: str
    sha256: str
    label: str
    w: int
    h: int


class WindowFrames(TypedDict):
    name: str
    label: str
    images: list[Frame]


def frame_label(case: CaseView, img: ImageView, index: int, count: int) -> str:
    if case.kind == "strip" and img.label:
        return img.label
    return f"Image {index + 1}/{count}" if count > 1 else (img.label or "")


def window_frames(case: CaseView) -> list[WindowFrames]:
    """Every window preset of the case, in the fixed preset order, with its frames."""
    out: list[WindowFrames] = []
    for name, images in group_by_window(case.reader_images).items():
        frames: list[Frame] = [
            {
                "url": image_url(img.sha256),
                "sha256": img.sha256,
                "label": frame_label(case, img, i, len(images)),
                "w": img.width,
                "h": img.height,
            }
            for i, img in enumerate(images)
        ]
        out.append({"name": name, "label": window_label(name), "images": frames})
    return out


def start_window(frames: Sequence[WindowFrames], preferred: Sequence[str]) -> int:
    """Index of the study's first default window the case has (else the first)."""
    names = [w["name"] for w in frames]
    return names.index(default_window(names, preferred)) if names else 0
