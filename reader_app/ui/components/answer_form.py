"""The answer form, with the stable widget keys fixed in DESIGN.md.

Keys: ``diagnosis``, ``likert``, ``idk``, ``submit``. Values are cleared after
each stored answer so the next case starts empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from reader_app.exam.submit import MAX_DIAGNOSIS_CHARS

DEFAULT_LIKERT_LABELS = ("a guess", "unsure", "moderately sure", "confident", "certain")
FORM_KEYS = ("diagnosis", "likert", "idk")


def clear_form() -> None:
    st.session_state["diagnosis"] = ""
    st.session_state["likert"] = None
    st.session_state["idk"] = False


def _on_idk() -> None:
    # "I don't know" is its own answer: it clears the other two.
    if st.session_state.get("idk"):
        st.session_state["diagnosis"] = ""
        st.session_state["likert"] = None


def answer_form(on_submit: Callable[[], None], likert_labels: Sequence[str] | None = None) -> None:
    """Render the form; ``on_submit`` runs as the button's callback, before the next rerun."""
    labels = list(likert_labels or DEFAULT_LIKERT_LABELS)
    for key, default in (("diagnosis", ""), ("likert", None), ("idk", False)):
        st.session_state.setdefault(key, default)
    idk = bool(st.session_state.get("idk"))
    st.text_input(
        "Diagnosis",
        key="diagnosis",
        max_chars=MAX_DIAGNOSIS_CHARS,
        disabled=idk,
        placeholder="Your single most specific diagnosis",
    )
    st.radio(
        "Confidence",
        options=[0, 1, 2, 3, 4],
        format_func=lambda v: f"{v} · {labels[v]}",
        key="likert",
        horizontal=True,
        disabled=idk,
        index=None,
    )
    st.checkbox("I don't know", key="idk", on_change=_on_idk)
    st.button("Submit answer", key="submit", type="primary", on_click=on_submit)
