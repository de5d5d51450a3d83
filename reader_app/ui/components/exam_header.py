"""The strip above every case: where the reader is ("Case 37 of 200") and a pause button."""

from __future__ import annotations

import streamlit as st

from reader_app.exam.progress import Progress
from reader_app.ui.components.exam_session import exam_state
from reader_app.ui.components.safe_text import escape_markdown


def start_pause() -> None:
    exam_state().start_pause()


def end_pause() -> None:
    exam_state().end_pause()


def is_paused() -> bool:
    return exam_state().paused


def exam_header(title: str, progress: Progress, *, pausable: bool) -> None:
    head, pause = st.columns([6, 1], vertical_alignment="bottom")
    with head:
        st.markdown(f"#### {escape_markdown(title)}")
        st.progress(progress.fraction, text=progress.label)
    with pause:
        if pausable:
            st.button(
                "Pause",
                key="pause",
                icon=":material/pause:",
                on_click=start_pause,
                width="stretch",
            )
