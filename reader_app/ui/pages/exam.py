"""The reader's exam page: show the next case, take the answer, store it, move on.

Screens, in order of precedence: study closed or locked; paused; practice
feedback; reviewing an earlier answer (only if the study allows revisions);
finished; the current case. Every answer is committed in the form's submit
callback, before the run that draws the next case; the page then always moves
on and says the answer was saved.

The case is one element, the case panel (components/case_panel.py): viewer,
marker and answer form. Its submit sends one value built from what is on
screen, whatever the gesture; that value carries the case it was drawn for, so
a submit for a case already stored (a double click, a stale tab) is reported,
never stored on the next case. The value goes through one check in
``reader_app.exam.submission`` and one store call. When the database does not
answer, the page keeps the case and the typed answer on screen with a message;
Submit can simply be pressed again.

Speed (docs/performance.md): the slot after the one just answered is the next
case's lookup hint (``_from_slot``), so drawing case 200 reads what drawing case
2 reads; the panel fetches and decodes the following case's first images once
the current one is in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from reader_app.core.auth import AuthError
from reader_app.exam.next_case import CaseView, case_at_slot, upcoming
from reader_app.exam.order import OrderSummary, ensure_order, order_summary
from reader_app.exam.practice import practice_feedback
from reader_app.exam.progress import progress_at
from reader_app.exam.report_submit import ReportAnswer, submit_report
from reader_app.exam.revisions import StoredAnswer, revise_answer, stored_answer
from reader_app.exam.submission import (
    CheckedSubmission,
    Submission,
    check_submission,
    read_submission,
)
from reader_app.exam.submit import (
    AnswerError,
    SubmitResult,
    study_closed_message,
    submit_answer,
)
from reader_app.exam.timing import active_ms, mark_shown
from reader_app.grounding.store import parse_location_json
from reader_app.models import Reader, utcnow
from reader_app.study.config import StudyConfig, study_settings
from reader_app.ui.components.case_panel import PanelForm, case_panel, submitted_value
from reader_app.ui.components.case_viewer import show_case_images
from reader_app.ui.components.exam_header import exam_header, is_paused
from reader_app.ui.components.exam_session import exam_state
from reader_app.ui.components.finish_panel import finish_panel, study_closed_panel
from reader_app.ui.components.image_urls import opening_window
from reader_app.ui.components.pause_screen import pause_screen
from reader_app.ui.components.practice_feedback import practice_feedback_panel
from reader_app.ui.components.report_answer import is_report_case
from reader_app.ui.context import (
    current_user,
    db_session,
    load_reader,
    reader_for_callback,
    sign_out,
)

CASE_COLUMNS = [7, 3]  # practice feedback: the image beside the reference answer
T = TypeVar("T")

DB_DOWN = (
    "The study's database is not answering right now, so your answer is not saved yet. "
    "It is still here: press Submit again in a moment. It will be stored once."
)

user = current_user()
exam = exam_state()  # the exam's one typed session object (reader_app.exam.state)


def _order(session: Session, reader: Reader) -> OrderSummary:
    """The order's shape, read once per browser session (it never changes)."""
    cached = exam.order
    if cached is None or cached.total == 0:
        summary = order_summary(session=session, reader=reader)
        if summary.total == 0:
            ensure_order(session=session, reader=reader)
            summary = order_summary(session=session, reader=reader)
        exam.order = cached = summary
    return cached


def _start_case(case: CaseView, config: StudyConfig) -> None:
    """A case drawn for the first time in this browser session: fresh form and clocks."""
    now = utcnow()
    exam.start_case(case, now, opening_window(case, config.default_windows))
    try:
        with db_session() as session:
            exam.first_shown_at = mark_shown(
                session=session, reader_id=user.reader_id, case_public_id=case.public_id, at=now
            )
    except DBAPIError:
        exam.first_shown_at = None  # submit_answer falls back to the stored row or shown_at


def form_error(message: str | None, field: str | None = None) -> None:
    """The panel's message above Submit (about ``field``, hidden once it is filled)."""
    exam.refuse(message, field)


def _meta() -> dict[str, object]:
    return {
        "paused_s": round(exam.paused_s, 1),
        "windows": sorted(w for w in exam.windows_seen if w),
        "enlarged": False,  # kept for older answers: full screen is in the viewer record
    }


def _case_label(case: CaseView) -> str:
    return f"practice case {case.number}" if case.practice else f"case {case.number - _practice()}"


def _checked(sub: Submission, case: CaseView | None) -> CaseView | None:
    """The case this submit is for, or None (and a message) when it is not the current one."""
    if case is None or sub.case_token != case.public_id:
        # the panel was drawn for a case whose answer is already stored (double click,
        # a stale tab): say so, and leave the current case's form as it is
        exam.notice = "That answer was already saved; your second submit changed nothing."
        form_error(None)
        return None
    return case


def _store(
    session: Session, reader: Reader, case: CaseView, checked: CheckedSubmission
) -> SubmitResult:
    """Commit the answer with what the page knows of the case: times, images, viewer use."""
    context = {
        "session": session,
        "reader": reader,
        "case_public_id": case.public_id,
        "shown_at": exam.shown_at,
        "image_sha256": case.reader_sha256,
        "meta": _meta(),
        "interaction": checked.interaction,
        "active_ms": active_ms(
            checked.active_ms,
            first_shown_at=exam.first_shown_at,
            shown_at=exam.shown_at,
            paused_s=exam.paused_s,
        ),
        "location_json": checked.location_json,
    }
    if isinstance(checked.answer, ReportAnswer):
        return submit_report(answer=checked.answer, **context)  # type: ignore[arg-type]
    return submit_answer(answer=checked.answer, **context)  # type: ignore[arg-type]


def _submission(report: bool) -> tuple[CaseView, CheckedSubmission] | None:
    """The panel's value, read and checked once; None (the form says why) when refused."""
    exam.attempt += 1
    config = exam.config
    try:
        sub = read_submission(submitted_value())
    except AnswerError as exc:
        form_error(str(exc), exc.field)
        return None
    case = _checked(sub, exam.case)
    if case is None or config is None:
        return None
    try:
        checked = check_submission(
            sub,
            case,
            report=report,
            grounding=config.grounding,
            grounding_required=config.grounding_required,
        )
    except AnswerError as exc:
        form_error(str(exc), exc.field)
        return None
    return case, checked


def _submit() -> None:
    """The panel's submit: store exactly what was on screen, then let the run move on."""
    current = exam.case
    got = _submission(current is not None and is_report_case(current))
    if got is None:
        return
    case, checked = got
    result = _as_reader(lambda session, reader: _store(session, reader, case, checked))
    if result is None:
        return
    if result.duplicate:
        exam.notice = (
            f"Your answer to {_case_label(case)} was already saved (in another tab?); "
            "that answer is kept."
        )
    else:
        exam.notice = f"Saved your answer to {_case_label(case)}."
    if case.practice:
        exam.feedback = case
    exam.from_slot = case.slot + 1
    exam.case = None
    form_error(None)


def _as_reader(store: Callable[[Session, Reader], T]) -> T | None:
    """Run ``store`` as the signed-in reader, in one session. None: it did not happen, and
    the form says why (access ended, a refusal, the database out of reach); the form
    keeps what the reader entered."""
    try:
        with db_session() as session:
            reader = reader_for_callback(session, user)
            if reader is None:
                form_error("Your access has ended. Ask the study coordinator.")
                return None
            return store(session, reader)
    except (AnswerError, AuthError) as exc:
        form_error(str(exc))
    except DBAPIError:
        form_error(DB_DOWN)
    return None


def _revise() -> None:
    stored = exam.review_answer
    got = _submission(False)
    config = exam.config
    if got is None or stored is None or config is None:
        return
    case, checked = got
    answer = checked.answer
    assert not isinstance(answer, ReportAnswer)
    revised = _as_reader(
        lambda session, reader: revise_answer(
            session=session,
            reader=reader,
            config=config,
            case_public_id=case.public_id,
            answer=answer,
            seen_revision=stored.revision,
            location_json=checked.location_json,
        )
    )
    if revised is None:
        return
    exam.notice = f"Your changed answer to case {case.slot + 1 - _practice()} is saved."
    _leave_review()


def _practice() -> int:
    return exam.order.practice if exam.order else 0


def _enter_review(slot: int, limit: int) -> None:
    exam.review = slot
    exam.review_limit = limit


def _leave_review() -> None:
    exam.review = exam.review_limit = exam.review_answer = exam.case = None
    form_error(None)


def _continue() -> None:
    exam.feedback = None


def _case_screen(
    case: CaseView, config: StudyConfig, review: bool, following: CaseView | None = None
) -> None:
    earlier = exam.review_answer if review else None
    marker, no_focal = parse_location_json(earlier.location_json if earlier else None)
    report = not review and is_report_case(case)
    values = None
    if earlier is not None:
        values = {
            "diagnosis": earlier.diagnosis or "",
            "likert": earlier.likert,
            "idk": earlier.idk,
            "no_focal_finding": no_focal,
        }
    form = PanelForm(
        mode="report" if report else "diagnosis",
        submit_label="Save changed answer"
        if review
        else ("Submit report" if report else "Submit answer"),
        likert_labels=config.likert_labels,
        grounding_required=config.grounding_required,
        form_key="review" if review else "exam",
        values=values,
        error=exam.form_error,
        error_field=exam.form_error_field,
        attempt=exam.attempt,
    )
    case_panel(
        case,
        form,
        _revise if review else _submit,
        windows=config.default_windows,
        theme=config.theme,
        grounding=config.grounding,
        marker=marker,
        history=case.history,
        note="Practice case: not scored. The reference answer follows your answer."
        if case.practice
        else None,
        following=following,
    )


def _database_down() -> None:
    """The database failed while drawing the page: keep the current case and its answer."""
    case, config, summary = exam.case, exam.config, exam.order
    if case is None or config is None or summary is None:
        st.error(
            "The study's database is not answering right now. Nothing you submitted is "
            "lost; reload this page in a moment."
        )
        st.stop()
    assert case is not None and config is not None and summary is not None
    if not exam.form_error:
        form_error(DB_DOWN)
    exam_header(config.title, progress_at(case.slot, summary), pausable=False)
    _case_screen(case, config, review=False)
    st.stop()


try:
    with db_session() as session:
        reader, study = load_reader(session, user)
        config = study_settings(study)
        exam.config = config
        summary = _order(session, reader)
        closed = study_closed_message(study.state)
        feedback_case = exam.feedback
        feedback = None
        if feedback_case is not None:
            feedback = practice_feedback(
                session=session, reader=reader, case_public_id=feedback_case.public_id
            )
        review_slot = exam.review if config.allow_revisions else None
        stored: StoredAnswer | None = None
        case: CaseView | None = None
        following: CaseView | None = None
        if review_slot is not None:
            case = case_at_slot(
                session=session, reader=reader, slot=review_slot, total=summary.total
            )
            if case is not None:
                stored = stored_answer(
                    session=session, reader=reader, case_public_id=case.public_id
                )
            if stored is None:
                _leave_review()
                review_slot, case = None, None
        if review_slot is None:
            ahead = upcoming(
                session=session,
                reader=reader,
                total=summary.total,
                from_slot=exam.from_slot,
            )
            case, following = ahead.case, ahead.following
except DBAPIError:
    _database_down()

if notice := exam.notice:
    exam.notice = None
    st.toast(notice, icon=":material/check_circle:" if notice.startswith("Saved") else None)

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
    left, right = st.columns(CASE_COLUMNS, gap="medium")
    with left:
        show_case_images(feedback_case, windows=config.default_windows, theme=config.theme)
    with right:
        practice_feedback_panel(feedback, config.likert_labels, _continue)
    st.stop()
exam.feedback = None

if review_slot is not None and case is not None and stored is not None:
    limit = exam.review_limit if exam.review_limit is not None else summary.total
    if exam.case is None or exam.case.public_id != case.public_id:
        _start_case(case, config)
        exam.review_answer = stored
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
if exam.case is None or exam.case.public_id != case.public_id:
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
