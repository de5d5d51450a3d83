"""The strip above every case: where the reader is ("Case 37 of 200") and a pause button."""

from __future__ import annotations

import time

import streamlit as st

from reader_app.exam.progress import Progress
from reader_app.ui.components.safe_text import escape_markdown


def start_pause() -> None:
    st.session_state["_paused_at"] = time.monotonic()


def end_pause() -> None:
    started = st.session_state.pop("_paused_at", None)
    if started is not None:
        paused = time.monotonic() - float(started)
        st.session_state["_paused_s"] = float(st.session_state.get("_paused_s", 0.0)) + paused


def is_paused() -> bool:
    return st.session_state.get("_paused_at") is not None


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
