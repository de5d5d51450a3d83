"""After a practice answer is stored: the reference answer, next to the reader's own."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from reader_app.exam.practice import PracticeFeedback
from reader_app.ui.components.flash import show_notice
from reader_app.ui.components.safe_text import escape_markdown, safe_join


def practice_feedback_panel(
    feedback: PracticeFeedback,
    likert_labels: Sequence[str],
    on_continue: Callable[[], None],
    notice: str | None = None,
) -> None:
    """The reference answer beside the reader's; ``notice`` (the submit's "Saved ...")
    goes first, in the column's flow, above everything it could otherwise cover."""
    show_notice(notice)
    st.info("Practice case: not scored. Here is the reference answer.")
    st.markdown("**Reference answer**")
    st.success(escape_markdown(feedback.reference))
    if feedback.also_accepted:
        st.caption("Also accepted: " + safe_join(feedback.also_accepted))
    st.markdown("**Your answer**")
    if feedback.idk:
        st.markdown("I don't know")
    else:
        likert = feedback.your_likert
        confidence = ""
        if likert is not None:
            confidence = f" (confidence {likert} · {escape_markdown(likert_labels[likert])})"
        st.markdown(f"{escape_markdown(feedback.your_diagnosis)}{confidence}")
    st.button("Next case", key="continue", type="primary", on_click=on_continue, width="stretch")
