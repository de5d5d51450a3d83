"""Display windows (width / level) by name: what ``study.toml`` and the manifest may name.

Apart from reader_app.ingest.render so that code which only checks a window's name
(``StudyConfig``, on every page of the app) does not load pydicom and its codecs; below
ingest, since the study settings (reader_app.study.config) name them too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    name: str
    center: float
    width: float
    function: str = "LINEAR"


# (width / level) from the issue: lung 1500/-600, mediastinum 350/50, bone 2000/500, brain 80/40
WINDOW_PRESETS: dict[str, Window] = {
    "lung": Window("lung", -600, 1500),
    "mediastinum": Window("mediastinum", 50, 350),
    "bone": Window("bone", 500, 2000),
    "brain": Window("brain", 40, 80),
}


# Bench 2's "each slice is intensity-normalized to an 8-bit grayscale image": the full
# range of each strip slice on its own (``auto`` takes one range for the whole strip).
# A study that names it (study.toml ``default_windows``, or the manifest's ``windows``)
# shows readers and sends models the same per-slice PNGs; on a single image it is ``auto``.
PER_SLICE = "per-slice"

# The file's own window is stored as "file" (ingest's name since the start) and named
# "original" everywhere a person reads it: the page, the viewer record, the exports and
# the manifest (which takes both). Old records that say "file" read as "original".
ORIGINAL = "original"
STORED_NAMES = {ORIGINAL: "file"}


def public_window_name(name: str) -> str:
    """The one name a window goes by outside ingest ("file" -> "original")."""
    return ORIGINAL if name == "file" else name
