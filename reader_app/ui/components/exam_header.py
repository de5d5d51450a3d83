"""The one line above every case: the study, where the reader is ("Case 37 of 200"),
the progress bar and Pause (and, where revisions are allowed, the way back).

One line so the image gets the screen (issue 28): the page frame's CSS
(``case_viewer.PAGE_CSS``) trims Streamlit's own padding and header here, on every
exam screen, so the page does not jump between the case, the pause and the end.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from reader_app.exam.progress import Progress
from reader_app.ui.components.case_viewer import PAGE_CSS
from reader_app.ui.components.exam_session import exam_state
from reader_app.ui.components.safe_text import escape_markdown

HEADER_COLUMNS = [4, 6, 2, 1.6]  # study · progress · the way back · Pause


def start_pause() -> None:
    exam_state().start_pause()


def end_pause() -> None:
    exam_state().end_pause()


def is_paused() -> bool:
    return exam_state().paused


def exam_header(
    title: str,
    progress: Progress,
    *,
    pausable: bool,
    on_back: Callable[[], None] | None = None,
) -> None:
    """``on_back``: a small "Earlier answer" button (key ``back``) runs it."""
    st.html(PAGE_CSS)
    with st.container(key="exam_header"):
        head, bar, back, pause = st.columns(HEADER_COLUMNS, vertical_alignment="center")
    with head:
        st.markdown(f"**{escape_markdown(title)}**")
    with bar:
        st.progress(progress.fraction, text=progress.label)
    with back:
        if on_back is not None:
            st.button(
                "◀ Earlier answer",
                key="back",
                type="tertiary",
                on_click=on_back,
                help="Change an earlier answer",
            )
    with pause:
        if pausable:
            st.button(
                "Pause",
                key="pause",
                icon=":material/pause:",
                on_click=start_pause,
                width="stretch",
            )
