"""The reader's exam page: show the next case, take the answer, store it, move on.

Screens, in order of precedence: study closed or locked; paused; practice
feedback; reviewing an earlier answer (only if the study allows revisions);
finished; the current case. Every answer is committed in the submit button's
callback, before the rerun that renders the next case.

Speed (docs/performance.md): the slot after the one just answered is the next
case's lookup hint (``_from_slot``), so drawing case 200 reads what drawing case
2 reads; the submit button sits outside the form's fragment, so a click costs
one page run; and once the reader starts answering, the following case's first
images are put on the page, invisible, for the browser to fetch ahead.
"""

from __future__ import annotations

import time

import streamlit as st
from sqlmodel import Session

from reader_app.auth import AuthError
from reader_app.exam.config import ExamConfig, exam_config
from reader_app.exam.next_case import CaseView, case_at_slot, upcoming
from reader_app.exam.order import OrderSummary, ensure_order, order_summary
from reader_app.exam.practice import practice_feedback
from reader_app.exam.progress import progress_at
from reader_app.exam.revisions import StoredAnswer, revise_answer, stored_answer
from reader_app.exam.submit import (
    AnswerError,
    study_closed_message,
    submit_answer,
    validate_answer,
)
from reader_app.models import Reader, utcnow
from reader_app.ui.components.answer_form import (
    answer_fields,
    clear_form,
    fill_form,
    form_is_stale,
    form_touched,
    idk_selected,
    submit_button,
)
from reader_app.ui.components.case_viewer import show_case_images
from reader_app.ui.components.exam_header import exam_header, is_paused
from reader_app.ui.components.finish_panel import finish_panel, study_closed_panel
from reader_app.ui.components.image_viewer import prefetch_images, reset_viewer
from reader_app.ui.components.pause_screen import pause_screen
from reader_app.ui.components.practice_feedback import practice_feedback_panel
from reader_app.ui.components.safe_text import show_text
from reader_app.ui.context import (
    current_user,
    db_session,
    load_reader,
    reader_for_callback,
    sign_out,
)

ORDER_KEY = "_order"  # the reader's OrderSummary, read once per browser session
FROM_SLOT_KEY = "_from_slot"  # the slot after the last one answered: the next case's hint
DOUBLE_CLICK_S = 1.0  # an empty submit this soon after a stored one is a double click's echo

user = current_user()
state = st.session_state


def _order(session: Session, reader: Reader) -> OrderSummary:
    """The order's shape, read once per browser session (it never changes)."""
    cached: OrderSummary | None = state.get(ORDER_KEY)
    if cached is None or cached.total == 0:
        summary = order_summary(session=session, reader=reader)
        if summary.total == 0:
            ensure_order(session=session, reader=reader)
            summary = order_summary(session=session, reader=reader)
        state[ORDER_KEY] = cached = summary
    return cached


def _start_case(case: CaseView, config: ExamConfig) -> None:
    state["_case"] = case
    state["_shown_at"] = utcnow()
    state["_paused_s"] = 0.0
    state["case_token"] = case.public_id
    reset_viewer(case, config.default_windows)
    clear_form()


def _meta() -> dict[str, object]:
    return {
        "paused_s": round(float(state.get("_paused_s", 0.0)), 1),
        "windows": sorted(w for w in state.get("_windows_seen", ()) if w),
        "enlarged": bool(state.get("_enlarged")),
    }


def _submit() -> None:
    """Submit button callback: store the answer, then let the rerun show the next case."""
    case: CaseView | None = state.get("_case")
    if case is None or form_is_stale(case.public_id):
        clear_form()  # a click meant for a case already answered: drop it and its values
        return
    empty = not idk_selected() and not (state.get("diagnosis") or "").strip()
    if empty and time.monotonic() - float(state.get("_submitted_at", 0.0)) < DOUBLE_CLICK_S:
        return  # the second click of a double click, landing on the freshly shown case
    try:
        answer = validate_answer(state.get("diagnosis"), state.get("likert"), idk_selected())
    except AnswerError as exc:
        state["_form_error"] = str(exc)
        return
    with db_session() as session:
        reader = reader_for_callback(session, user)
        if reader is None:
            state["_form_error"] = "Your access has ended. Ask the study coordinator."
            return
        try:
            result = submit_answer(
                session=session,
                reader=reader,
                case_public_id=case.public_id,
                answer=answer,
                shown_at=state.get("_shown_at"),
                image_sha256=case.reader_sha256,
                meta=_meta(),
            )
        except (AnswerError, AuthError) as exc:
            state["_form_error"] = str(exc)
            return
    if result.duplicate:
        state["_notice"] = "This case was already answered (in another tab?); that answer is kept."
    if case.practice:
        state["_feedback"] = case
    state[FROM_SLOT_KEY] = case.slot + 1
    state.pop("_case", None)
    clear_form()
    state["_submitted_at"] = time.monotonic()


def _revise() -> None:
    case: CaseView | None = state.get("_case")
    stored: StoredAnswer | None = state.get("_review_answer")
    if case is None or stored is None or form_is_stale(case.public_id):
        return
    try:
        answer = validate_answer(state.get("diagnosis"), state.get("likert"), idk_selected())
    except AnswerError as exc:
        state["_form_error"] = str(exc)
        return
    with db_session() as session:
        reader = reader_for_callback(session, user)
        if reader is None:
            state["_form_error"] = "Your access has ended. Ask the study coordinator."
            return
        try:
            revise_answer(
                session=session,
                reader=reader,
                config=state["_config"],
                case_public_id=case.public_id,
                answer=answer,
                seen_revision=stored.revision,
            )
        except (AnswerError, AuthError) as exc:
            state["_form_error"] = str(exc)
            return
    state["_notice"] = f"Your changed answer to case {case.slot + 1 - _practice()} is saved."
    _leave_review()


def _practice() -> int:
    summary: OrderSummary | None = state.get(ORDER_KEY)
    return summary.practice if summary else 0


def _enter_review(slot: int, limit: int) -> None:
    state["_review"] = slot
    state["_review_limit"] = limit


def _leave_review() -> None:
    for key in ("_review", "_review_limit", "_review_answer", "_case"):
        state.pop(key, None)
    clear_form()


def _continue() -> None:
    state.pop("_feedback", None)


@st.fragment
def _answer_fields(case_public_id: str, config: ExamConfig, following: CaseView | None) -> None:
    """The fields rerun on their own (typing, confidence, IDK) without redrawing the images.

    Once the reader has started answering, the following case's first images ride
    along, invisible, so the browser fetches them while the reader is still here.
    """
    if form_is_stale(case_public_id):
        clear_form()
        state["case_token"] = case_public_id
    answer_fields(likert_labels=config.likert_labels)
    if following is not None and form_touched():
        prefetch_images(following, config.default_windows)


def _case_screen(
    case: CaseView, config: ExamConfig, review: bool, following: CaseView | None = None
) -> None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        show_case_images(case)
    with right:
        if case.practice:
            st.info("Practice case: not scored. The reference answer follows your answer.")
        if case.history:
            st.markdown("**Clinical history**")
            show_text(case.history)
        _answer_fields(case.public_id, config, following)
        submit_button(
            _revise if review else _submit,
            case_public_id=case.public_id,
            submit_label="Save changed answer" if review else "Submit answer",
        )


with db_session() as session:
    reader, study = load_reader(session, user)
    config = exam_config(study)
    state["_config"] = config
    summary = _order(session, reader)
    closed = study_closed_message(study.state)
    feedback_case: CaseView | None = state.get("_feedback")
    feedback = None
    if feedback_case is not None:
        feedback = practice_feedback(
            session=session, reader=reader, case_public_id=feedback_case.public_id
        )
    review_slot: int | None = state.get("_review") if config.allow_revisions else None
    stored: StoredAnswer | None = None
    case: CaseView | None = None
    following: CaseView | None = None
    if review_slot is not None:
        case = case_at_slot(session=session, reader=reader, slot=review_slot, total=summary.total)
        if case is not None:
            stored = stored_answer(session=session, reader=reader, case_public_id=case.public_id)
        if stored is None:
            _leave_review()
            review_slot, case = None, None
    if review_slot is None:
        ahead = upcoming(
            session=session,
            reader=reader,
            total=summary.total,
            from_slot=int(state.get(FROM_SLOT_KEY, 0)),
        )
        case, following = ahead.case, ahead.following

if notice := state.pop("_notice", None):
    st.toast(notice)

if closed is not None:
    exam_header(config.title, progress_at(case.slot if case else None, summary), pausable=False)
    study_closed_panel(closed)
    st.stop()

if is_paused():
    exam_header(config.title, progress_at(case.slot if case else None, summary), pausable=False)
    pause_screen(sign_out)
    st.stop()

if feedback is not None and feedback_case is not None:
    exam_header(config.title, progress_at(feedback_case.slot, summary), pausable=False)
    left, right = st.columns([3, 2], gap="large")
    with left:
        show_case_images(feedback_case)
    with right:
        practice_feedback_panel(feedback, config.likert_labels, _continue)
    st.stop()
state.pop("_feedback", None)

if review_slot is not None and case is not None and stored is not None:
    limit = int(state.get("_review_limit", summary.total))
    if state.get("_case") is None or state["_case"].public_id != case.public_id:
        _start_case(case, config)
        fill_form(stored.diagnosis, stored.likert, stored.idk)
        state["_review_answer"] = stored
    exam_header(config.title, progress_at(case.slot, summary), pausable=False)
    st.warning(
        f"You are changing your earlier answer to case {case.slot + 1 - summary.practice}. "
        "The earlier answer is kept in the study's history."
    )
    earlier, later, done, _ = st.columns([1, 1, 2, 2])
    with earlier:
        st.button(
            "◀ Earlier",
            key="back",
            on_click=_enter_review,
            args=(review_slot - 1, limit),
            disabled=review_slot - 1 < summary.practice,
        )
    with later:
        st.button(
            "Later ▶",
            key="forward",
            on_click=_enter_review,
            args=(review_slot + 1, limit),
            disabled=review_slot + 1 >= limit,
        )
    with done:
        st.button("Back to the exam", key="review_done", type="primary", on_click=_leave_review)
    _case_screen(case, config, review=True)
    st.stop()

if case is None:
    exam_header(config.title, progress_at(None, summary), pausable=False)
    finish_panel(
        summary.scored,
        on_review=(
            (lambda: _enter_review(summary.total - 1, summary.total))
            if config.allow_revisions and summary.scored
            else None
        ),
        on_sign_out=sign_out,
    )
    st.stop()

assert case is not None
if state.get("_case") is None or state["_case"].public_id != case.public_id:
    _start_case(case, config)
exam_header(config.title, progress_at(case.slot, summary), pausable=True)
if summary.practice and case.slot == summary.practice:
    st.info("Practice is over: from this case on, your answers are scored.")
if config.allow_revisions and case.slot > summary.practice:
    st.button(
        "◀ Change an earlier answer",
        key="back",
        type="tertiary",
        on_click=_enter_review,
        args=(case.slot - 1, case.slot),
    )
_case_screen(case, config, review=False, following=following)
