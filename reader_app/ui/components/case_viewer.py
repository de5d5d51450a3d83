"""The case viewer: one in-browser viewer for spot images and CT strips.

An ``st.components.v2`` element (no iframe) running ``ui/static/viewer.js`` on top
of the vendored Panzoom library (``ui/static/panzoom.min.js``, MIT, licence
beside it). Zoom, pan, reset, 1:1, window presets, slice steps, thumbnails and
fullscreen all run in the browser: none of them reruns the script. The images
are the stored PNGs, byte for byte (:func:`image_urls.image_url`).

Two entry points, one viewer: :func:`show_case_images` is the viewer alone
(practice feedback, any page that shows a case without taking an answer; widget
key ``viewer``), and the exam's case panel (``case_panel.py``) mounts the same
viewer next to the answer form in one element, where the marker (grounding) and
the viewer's record go out with the answer in one value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.ui.components.image_urls import modality_words
from reader_app.ui.components.viewer_frames import start_window, window_frames
from scoring import Location

VIEWER_KEY = "viewer"
STATIC = Path(__file__).resolve().parent.parent / "static"


def static_text(*names: str) -> str:
    """Files of ui/static/ one after the other (a component's script after the helpers
    it uses: dom.js)."""
    return "\n".join((STATIC / name).read_text(encoding="utf-8") for name in names)


def sent_value(key: str, name: str) -> object:
    """What component ``key`` of ours last sent as ``name`` (a trigger or state value),
    in its callback or the page run after it; None when there is none."""
    result = st.session_state.get(key)
    if result is None:
        return None
    try:
        return result[name]
    except (KeyError, TypeError):
        return getattr(result, name, None)


THEMES = ("dark", "light")
VIEWER_JS = static_text("panzoom.min.js", "viewer.js")
VIEWER_CSS = static_text("viewer.css")

_viewer = st.components.v2.component(
    "readerstudy_case_viewer",
    js=VIEWER_JS
    + "\nexport default function (component) {\n  return mountViewer(component).cleanup;\n}\n",
    css=VIEWER_CSS,
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
    "Marker: click the finding (a first click into the viewer only gives it the keys) · "
    "M: marker at the pointer (or the centre) · Shift+arrows: move it · Delete: clear it · "
)

# The reading room's page frame (issue 28: the image gets the screen): Streamlit's
# own header (a bar of 3.75rem with the app menu) is not drawn on exam screens, the
# page padding is small, the one-line exam header sits tight on the case. CSS only:
# none of our scripts touch Streamlit's DOM.
PAGE_CSS = """
<style>
[data-testid=stHeader] { display: none; }
[data-testid=stMainBlockContainer] { padding: 0.5rem 1rem 0.25rem; max-width: none; }
[data-testid=stMain] [data-testid=stVerticalBlock] { gap: 0.5rem; }
.st-key-exam_header [data-testid=stMarkdownContainer] p {
  margin: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
}
.st-key-exam_header [data-testid=stProgress] p { font-size: 0.8125rem; margin: 0; }
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


def viewer_data(
    case: CaseView,
    *,
    theme: str = "dark",
    grounding: bool = False,
    marker: Location | None = None,
    model_marker: Location | None = None,
    original_values: bool = False,
) -> dict[str, Any] | None:
    """What the viewer is given for ``case`` (None: the case has no images).

    ``model_marker``: the AI model's point (the aided step), drawn as a ring of its own
    that the reader cannot move. ``original_values`` (the study option): W/L works on
    the slices' original values, not on the 8-bit render."""
    frames = window_frames(case, original_values=original_values)
    if not frames:
        return None
    stack = len(frames[0]["images"]) > 1
    strip = case.kind == "strip" and stack
    help_text = STRIP_HELP if strip else (STACK_HELP if stack else SPOT_HELP)
    return {
        "case": case.public_id,
        "kind": "strip" if strip else "spot",
        "windows": frames,
        "window": start_window(frames),
        "theme": theme if theme in THEMES else "dark",
        "alt": modality_words(case),
        "help": (MARKER_HELP if grounding else "") + help_text,
        "grounding": grounding,
        # every frame has its values: the viewer windows them (else the 8-bit render)
        "originalValues": all(f["values"] for w in frames for f in w["images"]),
        "marker": None
        if marker is None
        else {"x": marker.x, "y": marker.y, "slice": marker.slice if strip else None},
        "modelMarker": None
        if model_marker is None
        else {
            "x": model_marker.x,
            "y": model_marker.y,
            "slice": model_marker.slice if strip else None,
        },
    }


def page_css(theme: str) -> None:
    """The exam page's own styles (and the light ground when the study asks for it)."""
    st.html(PAGE_CSS + (LIGHT_CSS if theme == "light" else ""))


def show_case_images(
    case: CaseView,
    *,
    theme: str = "dark",
    grounding: bool = False,
    marker: Location | None = None,
    model_marker: Location | None = None,
) -> None:
    """The viewer alone for ``case``, opening on its first window.

    ``grounding``: the viewer shows (and takes) one marker; ``marker`` is where an
    earlier answer put it; ``model_marker``: the AI model's point, drawn, not movable."""
    page_css(theme)
    data = viewer_data(
        case, theme=theme, grounding=grounding, marker=marker, model_marker=model_marker
    )
    if data is None:
        st.warning("This case has no images.")
        return
    _viewer(key=VIEWER_KEY, data=data)
