"""Which images a case's viewer shows under which window preset (pure; no Streamlit).

Ingest stores one image (spot) or 16 slices (strip) per window: ``lung``,
``mediastinum``, ``bone``, ``brain``, the file's own window (``file``) or the
full range (``auto``). The viewer offers one preset button per window.
"""

from __future__ import annotations

from collections.abc import Sequence

from reader_app.exam.next_case import ImageView

PRESET_ORDER = ("lung", "mediastinum", "bone", "brain", "file", "auto")
PRESET_LABELS = {
    "lung": "Lung",
    "mediastinum": "Mediastinum",
    "bone": "Bone",
    "brain": "Brain",
    "file": "Original",
    "auto": "Full range",
    "": "Image",
}


def window_label(name: str) -> str:
    return PRESET_LABELS.get(name, name.capitalize())


def group_by_window(images: Sequence[ImageView]) -> dict[str, list[ImageView]]:
    """Window name -> its images in stored order; presets in a fixed, familiar order."""
    groups: dict[str, list[ImageView]] = {}
    for img in images:
        groups.setdefault(img.window or "", []).append(img)

    def rank(name: str) -> tuple[int, str]:
        return (PRESET_ORDER.index(name) if name in PRESET_ORDER else len(PRESET_ORDER), name)

    return {name: groups[name] for name in sorted(groups, key=rank)}


def default_window(names: Sequence[str], preferred: Sequence[str]) -> str:
    """The study's first default window the case has, else the first preset."""
    for name in preferred:
        if name in names:
            return name
    return names[0] if names else ""
