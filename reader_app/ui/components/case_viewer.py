"""The left half of the exam page: a spot viewer or a strip viewer, by case kind."""

from __future__ import annotations

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.ui.components.image_viewer import spot_viewer
from reader_app.ui.components.strip_viewer import strip_viewer

VIEWER_CSS = """
<style>
.st-key-viewer img { max-height: 62vh; object-fit: contain; }
.st-key-strip_viewer .st-key-viewer img { max-height: 50vh; }
.st-key-strip_grid [data-testid=stImage] {
  display: grid; grid-template-columns: repeat(8, minmax(0, 1fr)); gap: 0.5rem; width: 100%;
}
.st-key-strip_grid [data-testid=stImageContainer] { width: auto; min-width: 0; }
.st-key-strip_grid img { max-height: 16vh; object-fit: contain; }
[data-testid=stLayoutWrapper]:has(> .st-key-prefetch) { position: absolute; }
.st-key-prefetch {
  position: fixed; left: 0; top: 0; width: 40vw; z-index: -1; opacity: 0.003;
  pointer-events: none;
}
.st-key-prefetch [data-testid=stImage] { display: grid; grid-template-columns: repeat(4, 1fr); }
.st-key-enlarged img { max-height: 82vh; object-fit: contain; }
.st-key-case_token { display: none; }
</style>
"""


def show_case_images(case: CaseView) -> None:
    st.html(VIEWER_CSS)
    if case.kind == "strip" and len(case.reader_images) > 1:
        strip_viewer(case)
    else:
        spot_viewer(case)
