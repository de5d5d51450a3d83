"""Which images a case's viewer shows under which window preset (pure; no Streamlit).

Ingest stores one image (spot) or 16 slices (strip) per window: ``lung``,
``mediastinum``, ``bone``, ``brain``, the file's own window (stored as ``file``,
named ``original`` here and everywhere a person reads it) or the full range
(``auto``). The viewer offers one preset button per window, in the stored order:
the manifest's ``windows`` order, or when the manifest names none the order ingest
chose from the study's ``default_windows``. The first is the one a case opens on
(key 1).
"""

from __future__ import annotations

from collections.abc import Sequence

from reader_app.exam.next_case import ImageView
from reader_app.study.window_presets import public_window_name

PRESET_LABELS = {
    "lung": "Lung",
    "mediastinum": "Mediastinum",
    "bone": "Bone",
    "brain": "Brain",
    "original": "Original",
    "auto": "Full range",
    "per-slice": "Per slice",
    "": "Image",
}


def window_label(name: str) -> str:
    return PRESET_LABELS.get(public_window_name(name), name.capitalize())


def group_by_window(images: Sequence[ImageView]) -> dict[str, list[ImageView]]:
    """Window name (``public_window_name``) -> its images, both in stored order."""
    groups: dict[str, list[ImageView]] = {}
    for img in images:
        groups.setdefault(public_window_name(img.window or ""), []).append(img)
    return groups


def default_window(names: Sequence[str]) -> str:
    """The window a case opens on: the first stored (see the module notes)."""
    return names[0] if names else ""
