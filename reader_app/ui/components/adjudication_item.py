"""One blinded queue item: the case images, the key and the candidate answer, and the buttons.

Keyboard: Y correct, A correct and add as synonym, N incorrect, S skip (Streamlit
ignores these while the note field has focus: Tab or a click leaves it).
Stable keys: ``adj_note``, ``adj_correct``, ``adj_correct_synonym``,
``adj_incorrect``, ``adj_skip``. All user text is drawn with ``st.text``
(never markdown) and invisible control characters are shown as ``<U+XXXX>``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import streamlit as st

from reader_app.grading.matcher import Suggestion
from reader_app.grading.queue import QueueImage, QueueItem
from reader_app.ui.context import asset_bytes

NOTE_KEY = "adj_note"


def reveal_controls(text: str) -> str:
    """Show bidi overrides, zero-width and other invisible characters as <U+XXXX>."""
    return "".join(
        f"<U+{ord(ch):04X}>" if unicodedata.category(ch) in ("Cf", "Cc") and ch != "\n" else ch
        for ch in text
    )


def show_images(images: Sequence[QueueImage], case_kind: str) -> None:
    shown = [img for img in images if img.role != "montage"] or list(images)
    if case_kind == "spot" or len(shown) == 1:
        for img in shown:
            st.image(asset_bytes(img.sha256), caption=img.label or None, width="stretch")
        return
    cols = st.columns(4)
    for i, img in enumerate(shown):
        with cols[i % 4]:
            st.image(asset_bytes(img.sha256), caption=img.label or None, width="stretch")


def show_key(reference: str, synonyms: Sequence[str], history: str | None) -> None:
    st.caption("Reference diagnosis")
    st.text(reveal_controls(reference) or "—")
    st.caption("Accepted synonyms")
    st.text("\n".join(reveal_controls(s) for s in synonyms) or "—")
    if history:
        st.caption("Clinical history")
        st.text(reveal_controls(history))


def show_suggestions(suggestions: Sequence[Suggestion]) -> None:
    """Similar key forms and graded answers: a reading aid, never a decision."""
    if not suggestions:
        return
    with st.expander("Similar texts (spelling similarity only, not a verdict)"):
        for s in suggestions:
            where = (
                "key"
                if s.source == "key"
                else ("graded correct" if s.correct else "graded incorrect")
            )
            st.text(f"{s.similarity:5.1f}  {reveal_controls(s.text)}  [{where}]")


def decision_panel(item: QueueItem, on_decide: Callable[[bool, bool], None]) -> None:
    """The candidate, a note and the four keyboard-driven buttons."""
    if item.stage == "third":
        st.info("Tie-break: two adjudicators disagreed on this answer. Your decision is final.")
    st.caption("Candidate answer")
    with st.container(border=True, key="adj_candidate"):
        st.text(reveal_controls(item.candidate))
    st.text_input("Note (optional)", key=NOTE_KEY, max_chars=2000)
    left, right, skip = st.columns(3)
    with left:
        st.button(
            "Correct",
            key="adj_correct",
            type="primary",
            shortcut="Y",
            on_click=on_decide,
            args=(True, False),
            width="stretch",
        )
    with right:
        st.button(
            "Incorrect",
            key="adj_incorrect",
            shortcut="N",
            on_click=on_decide,
            args=(False, False),
            width="stretch",
        )
    with skip:
        st.button(
            "Skip",
            key="adj_skip",
            shortcut="S",
            on_click=_skip,
            args=(item.item_id,),
            width="stretch",
        )
    st.button(
        "Correct, and add this answer to the key as a synonym",
        key="adj_correct_synonym",
        shortcut="A",
        on_click=on_decide,
        args=(True, True),
        width="stretch",
    )


def _skip(item_id: str) -> None:
    skipped: list[str] = st.session_state.setdefault("_adj_skipped", [])
    if item_id not in skipped:
        skipped.append(item_id)


def skipped_items() -> list[str]:
    return list(st.session_state.get("_adj_skipped", []))


def clear_note() -> None:
    st.session_state[NOTE_KEY] = ""
