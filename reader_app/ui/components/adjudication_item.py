"""One blinded queue item: the case in the exam's viewer, the key, the candidate, the form.

The case is shown in the exam's own viewer (``case_viewer.show_case_images``: zoom,
windows, stack scrolling, for spot images and report strips alike), read-only: no
marker, nothing of it is sent. The decision form is ``grading_keys``, ours, so its
keys work straight after typing a note: Y correct, A correct and add as synonym,
N incorrect, S skip (Enter or Esc leaves the note field first). Stable keys:
``adj_form`` with ``data-field`` ``adj_note``, ``adj_correct``, ``adj_correct_synonym``,
``adj_incorrect``, ``adj_skip``. All user text is drawn with ``st.text`` (never
markdown) and invisible control characters are shown as ``<U+XXXX>``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import streamlit as st

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.grading.matcher import Suggestion
from reader_app.grading.queue import QueueItem
from reader_app.ui.components.case_viewer import show_case_images
from reader_app.ui.components.grading_keys import (
    MAX_NOTE_CHARS,
    GradeAction,
    grading_form,
    submitted_action,
)

FORM_KEY = "adj_form"
ACTIONS = (
    GradeAction("correct", "Correct", "Y", "adj_correct", primary=True),
    GradeAction("incorrect", "Incorrect", "N", "adj_incorrect"),
    GradeAction("skip", "Skip", "S", "adj_skip"),
    GradeAction(
        "synonym",
        "Correct, and add this answer to the key as a synonym",
        "A",
        "adj_correct_synonym",
        wide=True,
    ),
)
Decide = Callable[[bool, bool, str], None]  # correct, add as synonym, note


def reveal_controls(text: str) -> str:
    """Show bidi overrides, zero-width and other invisible characters as <U+XXXX>."""
    return "".join(
        f"<U+{ord(ch):04X}>" if unicodedata.category(ch) in ("Cf", "Cc") and ch != "\n" else ch
        for ch in text
    )


def show_case(public_id: str, kind: str, images: Sequence[ImageView]) -> None:
    """The case in the exam's viewer, as a reader saw it, opening on the manifest's first
    window (no marker: read-only)."""
    case = CaseView(
        public_id=public_id,
        kind=kind,
        practice=False,
        history=None,
        slot=0,
        total=1,
        images=tuple(images),
    )
    show_case_images(case)


def show_key(reference: str, synonyms: Sequence[str], history: str | None) -> None:
    st.caption("Reference diagnosis (answer key)")
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


def decision_panel(item: QueueItem, on_decide: Decide) -> None:
    """The candidate, then the note and the keyboard-driven decisions (ours)."""
    if item.stage == "third":
        st.info("Tie-break: two adjudicators disagreed on this answer. Your decision is final.")
    st.caption("Candidate answer")
    with st.container(border=True, key="adj_candidate"):
        st.text(reveal_controls(item.candidate))

    def on_action() -> None:
        value = submitted_action(FORM_KEY)
        if value is None or value.get("item") != item.item_id:
            return  # an action for an item no longer shown
        note = str(value.get("note") or "")[:MAX_NOTE_CHARS]
        action = value.get("action")
        if action == "skip":
            _skip(item.item_id)
        elif action in ("correct", "incorrect", "synonym"):
            on_decide(action != "incorrect", action == "synonym", note)

    grading_form(
        key=FORM_KEY,
        item=item.item_id,
        actions=ACTIONS,
        on_action=on_action,
        note_field="adj_note",
        saved=int(st.session_state.get("_adj_saved", 0)),
    )


def _skip(item_id: str) -> None:
    skipped: list[str] = st.session_state.setdefault("_adj_skipped", [])
    if item_id not in skipped:
        skipped.append(item_id)


def skipped_items() -> list[str]:
    return list(st.session_state.get("_adj_skipped", []))


def count_saved() -> None:
    """A decision was stored: the form's fields start empty for the next item."""
    st.session_state["_adj_saved"] = int(st.session_state.get("_adj_saved", 0)) + 1
