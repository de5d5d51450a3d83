"""The answer form, with the stable widget keys fixed in DESIGN.md.

Keys: ``diagnosis`` (text), ``likert`` (0-4), ``idk`` (the "I don't know"
button: a toggle that clears and disables the other two), ``submit``.
Shortcuts: Ctrl/Cmd+Enter submits, Ctrl/Cmd+I toggles "I don't know"; both
work while the cursor is in the diagnosis box.

``case_token`` is a hidden text box holding the id of the case the form was
rendered for. The browser sends it back with every click, so a click meant for
a case that has already been answered (the second click of a double click
that arrives after the answer was stored) is recognised and dropped, instead
of landing on the next case.

The form comes in two parts so a page can put the fields in a fragment (typing,
confidence and IDK rerun only them) and the submit button outside it: a click
on submit then reruns the page once, its callback storing the answer before
the next case is drawn, instead of rerunning the fragment first and the page
after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from reader_app.exam.config import DEFAULT_LIKERT_LABELS
from reader_app.exam.submit import MAX_DIAGNOSIS_CHARS
from reader_app.ui.components.safe_text import escape_markdown

SUBMIT_SHORTCUT = "Ctrl+Enter"
IDK_SHORTCUT = "Ctrl+I"


def clear_form() -> None:
    st.session_state["diagnosis"] = ""
    st.session_state["likert"] = None
    st.session_state["_idk"] = False
    st.session_state.pop("_form_error", None)


def fill_form(diagnosis: str | None, likert: int | None, idk: bool) -> None:
    st.session_state["diagnosis"] = diagnosis or ""
    st.session_state["likert"] = likert
    st.session_state["_idk"] = idk
    st.session_state.pop("_form_error", None)


def idk_selected() -> bool:
    return bool(st.session_state.get("_idk"))


def _toggle_idk() -> None:
    # "I don't know" is its own answer: choosing it clears the other two.
    on = not idk_selected()
    st.session_state["_idk"] = on
    st.session_state.pop("_form_error", None)
    if on:
        st.session_state["diagnosis"] = ""
        st.session_state["likert"] = None


def form_is_stale(case_public_id: str) -> bool:
    """Did this click come from a form rendered for another case?"""
    return st.session_state.get("case_token") != case_public_id


def form_touched() -> bool:
    """Has the reader started answering (a committed diagnosis, a confidence or IDK)?"""
    state = st.session_state
    diagnosis = bool((state.get("diagnosis") or "").strip())
    return diagnosis or state.get("likert") is not None or idk_selected()


def answer_form(
    on_submit: Callable[[], None],
    *,
    case_public_id: str,
    likert_labels: Sequence[str] | None = None,
    submit_label: str = "Submit answer",
) -> None:
    """Render the form; ``on_submit`` runs as the button's callback, before the next rerun."""
    answer_fields(likert_labels=likert_labels)
    submit_button(on_submit, case_public_id=case_public_id, submit_label=submit_label)


def answer_fields(*, likert_labels: Sequence[str] | None = None) -> None:
    """Diagnosis, confidence, "I don't know", and the last error message."""
    labels = list(likert_labels or DEFAULT_LIKERT_LABELS)
    state = st.session_state
    state.setdefault("diagnosis", "")
    state.setdefault("likert", None)
    idk = idk_selected()
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
        format_func=lambda v: f"{v} · {escape_markdown(labels[v])}",
        key="likert",
        disabled=idk,
    )
    st.button(
        "✓ I don't know (selected)" if idk else "I don't know",
        key="idk",
        type="primary" if idk else "secondary",
        on_click=_toggle_idk,
        shortcut=IDK_SHORTCUT,
    )
    if err := state.get("_form_error"):
        st.error(err)


def submit_button(
    on_submit: Callable[[], None], *, case_public_id: str, submit_label: str = "Submit answer"
) -> None:
    """The submit button and, last, the hidden case token."""
    state = st.session_state
    st.button(
        submit_label,
        key="submit",
        type="primary",
        on_click=on_submit,
        shortcut=SUBMIT_SHORTCUT,
        width="stretch",
    )
    # last, so a browser that shows this token has already rendered everything above
    state["case_token"] = case_public_id
    st.text_input("case", key="case_token", label_visibility="collapsed")
