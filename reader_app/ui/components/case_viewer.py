"""The case viewer: one in-browser viewer for spot images and CT strips.

An ``st.components.v2`` element (no iframe) running ``ui/static/viewer.js`` on top
of the vendored Panzoom library (``ui/static/panzoom.min.js``, MIT, licence
beside it). Zoom, pan, reset, 1:1, window presets, slice steps, thumbnails and
fullscreen all run in the browser: none of them reruns the script. The images
are the stored PNGs, byte for byte (:func:`image_viewer.image_url`).

With ``grounding`` the viewer also takes the reader's marker (the location step):
the exam page's script sends it in the form's hidden ``location`` field, and
``reader_app.exam.location`` checks it.

Keys: the element's widget key is ``viewer``. What the reader did in it reaches
Python inside the answer form: the exam page's script copies the viewer's
``summary()`` into the form's hidden ``viewer_interaction`` field just before a
submit, and :func:`viewer_interaction` reads it in the submit callback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.ui.components.image_viewer import modality_words
from reader_app.ui.components.strip_viewer import start_window, window_frames
from scoring import Location

VIEWER_KEY = "viewer"
MAX_RECORD_CHARS = 20_000  # a record is a few hundred bytes; anything longer is not ours
STATIC = Path(__file__).resolve().parent.parent / "static"
THEMES = ("dark", "light")

_viewer = st.components.v2.component(
    "readerstudy_case_viewer",
    js=(STATIC / "panzoom.min.js").read_text(encoding="utf-8")
    + "\n"
    + (STATIC / "viewer.js").read_text(encoding="utf-8"),
    css=(STATIC / "viewer.css").read_text(encoding="utf-8"),
    isolate_styles=True,
)

STRIP_HELP = (
    "Wheel or arrow keys: slices · Ctrl+wheel, pinch or +/−: zoom · drag: pan · "
    "0 or double-click: fit · O: 1:1 · 1–9: window · F: fullscreen"
)
SPOT_HELP = (
    "Wheel, pinch or +/−: zoom · drag: pan · 0 or double-click: fit · O: 1:1 · "
    "1–9: window · F: fullscreen"
)
STACK_HELP = "Arrow keys: images · " + SPOT_HELP
MARKER_HELP = (
    "Marker: click the finding (on the image: Enter places, arrows move, Shift+arrows ×10, "
    "Delete clears) · "
)

PAGE_CSS = """
<style>
[data-testid=stMainBlockContainer] { padding-top: 3rem; padding-bottom: 1rem; }
[data-testid=stLayoutWrapper]:has(> .st-key-prefetch) { position: absolute; }
.st-key-prefetch {
  position: fixed; left: 0; top: 0; width: 40vw; z-index: -1; opacity: 0.003;
  pointer-events: none;
}
.st-key-prefetch [data-testid=stImage] { display: grid; grid-template-columns: repeat(4, 1fr); }
/* the shortcut hint at 4.5:1 on the primary colour */
.st-key-submit kbd { color: #fff; opacity: 1; }
</style>
"""

# The study option theme = "light": the exam page on a light ground (the app's
# theme, .streamlit/config.toml, is the dark reading room).
LIGHT_CSS = """
<style>
.stApp, [data-testid=stHeader] { background: #f6f7f9; }
.stApp :is([data-testid=stMarkdownContainer], [data-testid=stText] *, [data-testid=stWidgetLabel],
  [data-testid=stCaptionContainer], h1, h2, h3, h4, label, p):not(button *, input) {
  color: #15191f;
}
"""


def show_case_images(
    case: CaseView,
    *,
    windows: Sequence[str] = (),
    theme: str = "dark",
    grounding: bool = False,
    marker: Location | None = None,
) -> None:
    """The viewer for ``case``, opening on the first of ``windows`` the case has.

    ``grounding``: the reader places one marker (the location step, exam/location.py);
    ``marker`` is where an earlier answer put it (changing an answer)."""
    st.html(PAGE_CSS + (LIGHT_CSS if theme == "light" else ""))
    frames = window_frames(case)
    if not frames:
        st.warning("This case has no images.")
        return
    stack = len(frames[0]["images"]) > 1
    strip = case.kind == "strip" and stack
    help_text = STRIP_HELP if strip else (STACK_HELP if stack else SPOT_HELP)
    _viewer(
        key=VIEWER_KEY,
        data={
            "case": case.public_id,
            "kind": "strip" if strip else "spot",
            "windows": frames,
            "window": start_window(frames, windows),
            "theme": theme if theme in THEMES else "dark",
            "alt": modality_words(case),
            "help": (MARKER_HELP if grounding else "") + help_text,
            "grounding": grounding,
            "marker": None
            if marker is None
            else {"x": marker.x, "y": marker.y, "slice": marker.slice if strip else None},
        },
    )


def viewer_interaction(case_public_id: str, sent: str) -> dict[str, Any] | None:
    """What the reader did in the viewer on this case, as the browser sent it with the
    answer (``sent``, JSON): ``slices_visited``, ``windows_used``, ``zoom_used``,
    ``pan_used``, ``one_to_one_used``, ``max_zoom``, ``thumbnail_clicks``,
    ``fullscreen_s``. None when the browser sent nothing usable for this case."""
    try:
        value = json.loads(sent) if sent and len(sent) <= MAX_RECORD_CHARS else None
    except ValueError:
        return None
    if not isinstance(value, Mapping) or value.get("case") != case_public_id:
        return None
    return clean_interaction(value)


def clean_interaction(raw: Mapping[str, object]) -> dict[str, Any]:
    """The browser's record, reduced to known fields of the right types (it is input)."""

    def ints(v: object) -> list[int]:
        items = v if isinstance(v, list) else []
        return sorted({int(x) for x in items if isinstance(x, int | float) and 0 < x < 10_000})

    def words(v: object) -> list[str]:
        items = v if isinstance(v, list) else []
        return [str(x)[:32] for x in items if isinstance(x, str)][:16]

    def num(v: object, high: float) -> float:
        x = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0
        return round(min(max(x, 0.0), high), 2)

    return {
        "slices_visited": ints(raw.get("slices_visited")),
        "windows_used": words(raw.get("windows_used")),
        "zoom_used": raw.get("zoom_used") is True,
        "pan_used": raw.get("pan_used") is True,
        "one_to_one_used": raw.get("one_to_one_used") is True,
        "max_zoom": num(raw.get("max_zoom"), 1000.0),
        "thumbnail_clicks": int(num(raw.get("thumbnail_clicks"), 1e6)),
        "fullscreen_s": num(raw.get("fullscreen_s"), 86_400.0),
    }
