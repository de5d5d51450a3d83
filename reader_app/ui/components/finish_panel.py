"""The end of the exam, and the messages for a paused or closed study."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st


def finish_panel(
    answered: int, *, on_review: Callable[[], None] | None, on_sign_out: Callable[[], None]
) -> None:
    st.success(
        f"You have finished this exam: {answered} cases answered. "
        "Thank you! Your answers are saved."
    )
    cols = st.columns([1, 1, 4])
    if on_review is not None:
        with cols[0]:
            st.button("Review my answers", key="back", on_click=on_review, width="stretch")
    with cols[1]:
        st.button("Sign out", key="sign_out", on_click=on_sign_out, width="stretch")


def study_closed_panel(message: str) -> None:
    st.warning(message)
