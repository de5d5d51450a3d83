"""While paused the case is hidden; the reader resumes or signs out."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from reader_app.ui.components.exam_header import end_pause


def pause_screen(on_sign_out: Callable[[], None]) -> None:
    st.info(
        "Paused. The case is hidden and the clock is stopped. Every answer you "
        "submitted is saved; you can also sign out and come back later with "
        "the same link, starting at your first unanswered case."
    )
    resume, leave, _ = st.columns([1, 1, 4])
    with resume:
        st.button("Resume", key="resume", type="primary", on_click=end_pause, width="stretch")
    with leave:
        st.button("Sign out", key="sign_out", on_click=on_sign_out, width="stretch")
