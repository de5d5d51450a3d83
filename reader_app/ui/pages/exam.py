"""The reader's exam page: show the next case, take the answer, store it, move on."""

from __future__ import annotations

import time

import streamlit as st

from reader_app.auth import AuthError
from reader_app.casebank import study_config
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import AnswerError, submit_answer, validate_answer
from reader_app.models import utcnow
from reader_app.ui.components.answer_form import answer_form, clear_form
from reader_app.ui.components.image_viewer import show_case_images
from reader_app.ui.context import current_user, db_session, load_reader

DOUBLE_CLICK_WINDOW_S = 1.5

user = current_user()


def _submit() -> None:
    """Button callback: runs before the rerun, so the answer is stored before the next case."""
    case = st.session_state.get("_case")
    if case is None:
        return
    state = st.session_state
    empty = not state.get("idk") and not (state.get("diagnosis") or "").strip()
    if empty and time.monotonic() - state.get("_last_submit", 0.0) < DOUBLE_CLICK_WINDOW_S:
        return  # the second click of a double click, arriving after the form was cleared
    try:
        answer = validate_answer(
            state.get("diagnosis"), state.get("likert"), bool(state.get("idk"))
        )
    except AnswerError as exc:
        state["_form_error"] = str(exc)
        return
    with db_session() as session:
        reader, _ = load_reader(session, user)
        try:
            submit_answer(
                session=session,
                reader=reader,
                case_public_id=case.public_id,
                answer=answer,
                shown_at=state.get("_shown_at"),
                image_sha256=case.image_sha256,
            )
        except (AnswerError, AuthError) as exc:
            state["_form_error"] = str(exc)
            return
    state["_last_submit"] = time.monotonic()
    state.pop("_case", None)
    state.pop("_form_error", None)
    clear_form()


with db_session() as session:
    reader, study = load_reader(session, user)
    config = study_config(study)
    total = ensure_order(session=session, reader=reader)
    case = next_case(session=session, reader=reader, total=total)

st.title(study.title)
if case is None:
    st.progress(1.0, text=f"All {total} cases answered")
    st.success("You have finished this exam. Thank you! Your answers are saved.")
    st.stop()

if st.session_state.get("_case") is None or st.session_state["_case"].public_id != case.public_id:
    st.session_state["_case"] = case
    st.session_state["_shown_at"] = utcnow()

st.progress(case.slot / max(total, 1), text=f"Case {case.number} of {total}")
left, right = st.columns([3, 2], gap="large")
with left:
    show_case_images(case)
with right:
    if case.practice:
        st.info("Practice case: not scored.")
    if case.history:
        st.markdown("**Clinical history**")
        st.text(case.history)
    answer_form(_submit, config.get("likert_labels"))
    if err := st.session_state.get("_form_error"):
        st.error(err)
