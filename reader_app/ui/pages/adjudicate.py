"""The adjudicator's blinded queue: one answer at a time, decided from the keyboard.

The page gets its data from reader_app.grading (QueueItem, RubricItem), which
holds no responder field at all; it only renders it.
"""

from __future__ import annotations

import streamlit as st

from reader_app.core.auth import AuthError
from reader_app.grading.adjudication import (
    DecisionResult,
    GradingError,
    adjudicator_agreement,
    decide,
    undo_last_decision,
)
from reader_app.grading.config import GradingConfigError, grading_config
from reader_app.grading.key import AnswerKeyError
from reader_app.grading.queue import adjudication_queue
from reader_app.grading.rubric import (
    record_rubric_grade,
    rubric_queue,
    undo_last_rubric_grade,
)
from reader_app.grading.rubric_grades import RUBRIC_MAX, RubricError
from reader_app.grading.run_judges import run_judges
from reader_app.ui.components.adjudication_agreement import agreement_panel
from reader_app.ui.components.adjudication_item import (
    count_saved,
    decision_panel,
    show_case,
    show_key,
    show_suggestions,
    skipped_items,
)
from reader_app.ui.components.adjudication_rubric import (
    count_saved as count_graded,
)
from reader_app.ui.components.adjudication_rubric import (
    rubric_panel,
    skipped_reports,
)
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.context import current_user, db_session, load_reader

user = current_user()
state = st.session_state
PAGE = "adjudicate"  # its flash messages


def _decide(correct: bool, add_synonym: bool, note: str) -> None:
    item_id = state.get("_adj_item")
    if not item_id:
        return
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            result = decide(
                session=session,
                adjudicator=adjudicator,
                item_id=item_id,
                correct=correct,
                note=note or None,
                add_synonym=add_synonym,
            )
        except (GradingError, AuthError, AnswerKeyError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state.pop("_adj_item", None)
    state.pop("_adj_first", None)
    count_saved()
    flash(PAGE, "success", decision_notice(result))


def decision_notice(result: DecisionResult) -> str:
    """Everything the decision did, in one line: the verdict, the synonym added."""
    if not result.final:
        return "Saved. A second adjudicator grades this answer independently."
    said = "Saved: correct" if result.correct else "Saved: incorrect"
    if result.synonym_added:
        said += ", and the answer was added to the key as a synonym (this cannot be undone here)"
    return said + "."


def _undo() -> None:
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            undone = undo_last_decision(session=session, adjudicator=adjudicator)
        except (GradingError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state["_adj_first"] = undone.item_id
    count_saved()
    was = "correct" if undone.correct else "incorrect"
    flash(PAGE, "info", f"Undone: your decision ({was}). The answer is back for your decision.")


def _save_rubric(grade: str, note: str) -> None:
    item_id = state.get("_rubric_item")
    if not item_id:
        return
    if not grade.isdigit() or not 0 <= int(grade) <= RUBRIC_MAX:
        flash(PAGE, "error", f"Enter a grade from 0 to {RUBRIC_MAX} (a whole number).")
        return
    score = int(grade)
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            record_rubric_grade(
                session=session,
                adjudicator=adjudicator,
                item_id=item_id,
                score=score,
                note=note or None,
            )
        except (RubricError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state.pop("_rubric_item", None)
    count_graded()
    flash(PAGE, "success", f"Saved: {score} / {RUBRIC_MAX}.")


def _undo_rubric() -> None:
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            undone = undo_last_rubric_grade(session=session, adjudicator=adjudicator)
        except (RubricError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    count_graded()  # the form starts empty for it
    flash(
        PAGE,
        "info",
        f"Undone: your grade ({undone.score} / {RUBRIC_MAX}). The report is back for your grade.",
    )


def _ask_judges() -> None:
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            report = run_judges(session=session, actor=adjudicator)
        except (GradingConfigError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    flash(
        PAGE,
        "success",
        f"Judges asked about {report.asked} answers: {report.locked} agreed and were graded, "
        f"{report.disagreements} split and {report.errors} failed (those stay in your queue).",
    )


with db_session() as session:
    adjudicator, study = load_reader(session, user)
    try:
        config = grading_config(study)
    except GradingConfigError as exc:
        st.error(f"The study's grading settings are not usable: {exc}")
        st.stop()
    reports_mode = config.rubric_enabled and state.get("adj_mode") == "Reports"
    if reports_mode:
        rubric_view = rubric_queue(session=session, adjudicator=adjudicator, skip=skipped_reports())
        size = rubric_view.size
    else:
        view = adjudication_queue(
            session=session,
            adjudicator=adjudicator,
            skip=skipped_items(),
            first=state.get("_adj_first"),
        )
        size = view.size
    agreement = (
        adjudicator_agreement(session=session, actor=adjudicator) if config.grading.double else None
    )

st.title("Adjudication")
show_flash(PAGE)
top_left, top_right = st.columns([3, 2])
with top_left:
    if config.rubric_enabled:
        # a radio, not a segmented control: the theme's primary blue as selected text on
        # the dark ground is 3.1:1, below AA
        st.radio("Queue", ["Diagnoses", "Reports"], key="adj_mode", horizontal=True)
with top_right, st.container(key="adj_queue_size"):
    st.metric("Waiting for you", size)

if reports_mode:
    if rubric_view.item is None:
        st.success("No report is waiting for your grade.")
    else:
        state["_rubric_item"] = rubric_view.item.item_id
        rubric_panel(rubric_view.item, _save_rubric)
    st.button(
        "Undo my last grade",
        key="rubric_undo",
        shortcut="U",
        on_click=_undo_rubric,
        help="Takes back your most recent report grade (kept in the audit log); "
        "the report comes back to your queue.",
    )
    st.caption("Keys: type the grade, then G or Enter saves · S skip · U undo")
else:
    if config.grading.judges:
        st.button(
            "Ask the judges about waiting answers", key="adj_run_judges", on_click=_ask_judges
        )
    if view.item is None:
        st.success("No answer is waiting for your decision.")
    else:
        item = view.item
        state["_adj_item"] = item.item_id
        left, right = st.columns([3, 2], gap="large")
        with left:
            show_case(item.case_public_id, item.case_kind, item.images)
        with right:
            show_key(item.reference, item.synonyms, item.history)
            decision_panel(item, _decide)
            show_suggestions(item.suggestions)
    st.button(
        "Undo my last decision",
        key="adj_undo",
        shortcut="U",
        on_click=_undo,
        help="Takes back your most recent decision (kept in the audit log) and shows it again.",
    )
    st.caption(
        "Keys: Y correct · A correct + add as synonym · N incorrect · S skip · U undo "
        "(in the note, Enter or Esc first)"
    )

if agreement is not None:
    agreement_panel(agreement)
