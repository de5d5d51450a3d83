"""One blinded report to grade on the 0-40 rubric (SCORING.md section 6).

The case is shown in the exam's viewer (a report strip steps through its slices);
the grade form is ``grading_keys`` (key ``rubric_form``): type the grade and press
G (or Enter) straight away, S skips. ``data-field`` names: ``rubric_score``,
``rubric_note``, ``rubric_save``, ``rubric_skip``. The reference is labelled
"Reference report" when the case has one, else "Reference diagnosis".
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from reader_app.grading.rubric import RubricItem
from reader_app.grading.rubric_grades import RUBRIC_MAX, RUBRIC_TIERS
from reader_app.ui.components.adjudication_item import reveal_controls, show_case
from reader_app.ui.components.grading_keys import (
    MAX_NOTE_CHARS,
    GradeAction,
    GradeField,
    grading_form,
    submitted_action,
)

FORM_KEY = "rubric_form"
TIER_HELP = " · ".join(f"{name} {low}-{high}" for name, low, high in RUBRIC_TIERS)
ACTIONS = (
    GradeAction("save", "Save grade", "G", "rubric_save", primary=True),
    GradeAction("skip", "Skip", "S", "rubric_skip"),
)
GRADE = GradeField(
    label=f"Grade (0-{RUBRIC_MAX})",
    field="rubric_score",
    help=f"G or Enter saves · {TIER_HELP}",
    save="G",
)
Save = Callable[[str, str], None]  # the grade as typed, the note


def reference_label(item: RubricItem) -> str:
    return "Reference report" if item.reference_is_report else "Reference diagnosis"


def rubric_panel(item: RubricItem, on_save: Save) -> None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        show_case(item.case_public_id, item.case_kind, item.images)
    with right:
        st.caption(reference_label(item))
        with st.container(key="rubric_reference"):
            st.text(reveal_controls(item.reference) or "—")
        st.caption("Findings")
        with st.container(border=True, key="rubric_findings"):
            st.text(reveal_controls(item.findings) or "—")
        st.caption("Impression")
        with st.container(border=True, key="rubric_impression"):
            st.text(reveal_controls(item.impression) or "—")

        def on_action() -> None:
            value = submitted_action(FORM_KEY)
            if value is None or value.get("item") != item.item_id:
                return
            if value.get("action") == "skip":
                _skip(item.item_id)
            elif value.get("action") == "save":
                grade = str(value.get("grade") or "").strip()
                on_save(grade, str(value.get("note") or "")[:MAX_NOTE_CHARS])

        grading_form(
            key=FORM_KEY,
            item=item.item_id,
            actions=ACTIONS,
            on_action=on_action,
            note_field="rubric_note",
            grade=GRADE,
            saved=int(st.session_state.get("_rubric_saved", 0)),
        )


def _skip(item_id: str) -> None:
    skipped: list[str] = st.session_state.setdefault("_rubric_skipped", [])
    if item_id not in skipped:
        skipped.append(item_id)


def skipped_reports() -> tuple[str, ...]:
    return tuple(st.session_state.get("_rubric_skipped", []))


def count_saved() -> None:
    """A grade was stored: the form's fields start empty for the next report."""
    st.session_state["_rubric_saved"] = int(st.session_state.get("_rubric_saved", 0)) + 1
