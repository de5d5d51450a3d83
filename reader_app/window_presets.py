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
