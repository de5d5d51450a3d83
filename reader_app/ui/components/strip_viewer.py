"""A CT strip: one large slice stepped with a slider or the arrow keys, the 16 labelled
slices in a grid below, and window presets (lung, mediastinum, bone).

Keyed widgets: ``window``, ``slice`` (1-based), ``slice_prev`` / ``slice_next``
(shortcuts Left / Right, inactive while typing in a text box), ``enlarge``.
It is a fragment: stepping through slices reruns this viewer only.

The grid is one ``st.image`` call with a list (laid out 8 to a row by the CSS in
``case_viewer``), not 16 images in 8 columns and 2 rows: one element instead of
34 to send and draw at every case and every step.
"""

from __future__ import annotations

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.exam.windows import group_by_window
from reader_app.ui.components.image_viewer import enlarge_button, show_image, window_picker
from reader_app.ui.context import asset_bytes


def _step(delta: int, count: int) -> None:
    """Step from the slice the server last showed, not the browser's echo of the slider:
    while a key is held, that echo lags behind and would make presses cancel out."""
    state = st.session_state
    current = int(state.get("_slice_shown") or state.get("slice") or 1)
    state["slice"] = state["_slice_shown"] = min(max(current + delta, 1), count)
    state["_stepped"] = True


@st.fragment
def strip_viewer(case: CaseView) -> None:
    with st.container(key="strip_viewer"):
        _strip(case)


def _strip(case: CaseView) -> None:
    groups = group_by_window(case.reader_images)
    with st.container(key="viewer"):
        tools, zoom = st.columns([5, 1], vertical_alignment="center")
        with tools:
            slices = groups[window_picker(list(groups))]
        count = len(slices)
        state = st.session_state
        current = min(max(int(state.get("slice") or 1), 1), count)
        if not state.pop("_stepped", False):
            state["_slice_shown"] = current  # the reader dragged the slider (or nothing moved)
        state["slice"] = current
        prev_col, slider_col, next_col = st.columns([1, 10, 1], vertical_alignment="center")
        with prev_col:
            st.button(
                "",
                key="slice_prev",
                icon=":material/chevron_left:",
                shortcut="Left",
                on_click=_step,
                args=(-1, count),
                disabled=current == 1,
            )
        with slider_col:
            st.slider("Slice", 1, count, key="slice", label_visibility="collapsed")
        with next_col:
            st.button(
                "",
                key="slice_next",
                icon=":material/chevron_right:",
                shortcut="Right",
                on_click=_step,
                args=(1, count),
                disabled=current == count,
            )
        big = slices[current - 1]
        with zoom:
            enlarge_button(big)
        show_image(big)
    with st.container(key="strip_grid"):
        st.image(
            [asset_bytes(img.sha256) for img in slices],
            caption=[f"▶ {img.label}" if img is big else img.label for img in slices],
            width="content",
            output_format="PNG",
        )
