"""The images a case's viewer shows: served as the stored PNG bytes, described in words.

:func:`image_url` registers the stored PNG with Streamlit's media file manager,
exactly as ``st.image(bytes, output_format="PNG")`` does, and returns its URL:
the browser gets the stored bytes, never re-encoded, and the URL (a hash of the
bytes) is the one ``st.image`` would give. The panel fetches the next case's
:func:`first_images` itself (``ui/static/panel.js``), so the viewer's cache is warm.
"""

from __future__ import annotations

import base64

from streamlit import config as st_config
from streamlit import runtime

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.windows import default_window, group_by_window
from reader_app.ui.context import asset_bytes

MEDIA_COORDINATES = "readerstudy.viewer.{sha256}"  # one per image: none replaces another


def opening_window(case: CaseView) -> str:
    """The window a case opens on (the viewer itself starts at slice 1, fit)."""
    return default_window(list(group_by_window(case.reader_images)))


def first_images(case: CaseView) -> list[ImageView]:
    """What the viewer shows when a case opens: its default window's first image, or
    for a strip that window's slices (the large one is the first slice)."""
    groups = group_by_window(case.reader_images)
    if not groups:
        return []
    shown = groups[default_window(list(groups))]
    strip = case.kind == "strip" and len(case.reader_images) > 1
    return shown if strip else shown[:1]


def image_url(sha256: str) -> str:
    """Where the browser fetches the stored PNG ``sha256``, byte for byte."""
    data = asset_bytes(sha256)
    if not runtime.exists():  # bare mode (no server): inline the very bytes
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    url = runtime.get_instance().media_file_mgr.add(
        data, "image/png", MEDIA_COORDINATES.format(sha256=sha256)
    )
    base = str(st_config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{url}" if base and url.startswith("/") else url


def modality_words(case: CaseView) -> str:
    """The alt text's start: what kind of picture this is, with nothing from the source."""
    if case.kind == "strip":
        n = len(group_by_window(case.reader_images).get(_first_window(case), []))
        return f"Case image: CT strip of {n} axial slices"
    return "Case image"


def _first_window(case: CaseView) -> str:
    groups = group_by_window(case.reader_images)
    return next(iter(groups), "")
