"""The adjudicator's blinded queue: one answer at a time, decided from the keyboard.

The page gets its data from reader_app.grading (QueueItem, RubricItem), which
holds no responder field at all; it only renders it.
"""

from __future__ import annotations

import streamlit as st

from reader_app.core.auth import AuthError
from reader_app.grading.adjudication import (
    GradingError,
    adjudicator_agreement,
    decide,
    undo_last_decision,
)
from reader_app.grading.config import GradingConfigError, grading_config
from reader_app.grading.key import AnswerKeyError
from reader_app.grading.queue import adjudication_queue
from reader_app.grading.rubric import record_rubric_grade, rubric_queue
from reader_app.grading.rubric_grades import RubricError
from reader_app.grading.run_judges import run_judges
from reader_app.ui.components.adjudication_agreement import agreement_panel
from reader_app.ui.components.adjudication_item import (
    NOTE_KEY,
    clear_note,
    decision_panel,
    show_images,
    show_key,
    show_suggestions,
    skipped_items,
)
from reader_app.ui.components.adjudication_rubric import (
    clear_rubric_form,
    rubric_panel,
    skipped_reports,
)
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.context import current_user, db_session, load_reader

user = current_user()
state = st.session_state
PAGE = "adjudicate"  # its flash messages


def _decide(correct: bool, add_synonym: bool) -> None:
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
                note=state.get(NOTE_KEY),
                add_synonym=add_synonym,
            )
        except (GradingError, AuthError, AnswerKeyError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state.pop("_adj_item", None)
    state.pop("_adj_first", None)
    clear_note()
    if result.final:
        flash(PAGE, "success", "Saved: " + ("correct." if result.correct else "incorrect."))
    else:
        flash(PAGE, "success", "Saved. A second adjudicator grades this answer independently.")


def _undo() -> None:
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            undone = undo_last_decision(session=session, adjudicator=adjudicator)
        except (GradingError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state["_adj_first"] = undone.item_id
    clear_note()
    was = "correct" if undone.correct else "incorrect"
    flash(PAGE, "info", f"Undone: your decision ({was}). The answer is back for your decision.")


def _save_rubric() -> None:
    item_id, score = state.get("_rubric_item"), state.get("rubric_score")
    if not item_id:
        return
    if score is None:
        flash(PAGE, "error", "Enter a grade from 0 to 40.")
        return
    with db_session() as session:
        adjudicator, _ = load_reader(session, user)
        try:
            record_rubric_grade(
                session=session,
                adjudicator=adjudicator,
                item_id=item_id,
                score=int(score),
                note=state.get("rubric_note"),
            )
        except (RubricError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state.pop("_rubric_item", None)
    clear_rubric_form()
    flash(PAGE, "success", f"Saved: {int(score)} / 40.")


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
    agreement = adjudicator_agreement(session=session, actor=adjudicator) if config.double else None

st.title("Adjudication")
show_flash(PAGE)
top_left, top_right = st.columns([3, 2])
with top_left:
    if config.rubric_enabled:
        st.segmented_control(
            "Queue", ["Diagnoses", "Reports"], key="adj_mode", default="Diagnoses", required=True
        )
with top_right, st.container(key="adj_queue_size"):
    st.metric("Waiting for you", size)

if reports_mode:
    if rubric_view.item is None:
        st.success("No report is waiting for your grade.")
    else:
        state["_rubric_item"] = rubric_view.item.item_id
        rubric_panel(rubric_view.item, _save_rubric)
else:
    if config.judge_names:
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
            show_images(item.images, item.case_kind)
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
    st.caption("Keys: Y correct · A correct + add as synonym · N incorrect · S skip · U undo")

if agreement is not None:
    agreement_panel(agreement)
