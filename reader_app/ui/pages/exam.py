"""The reader's exam page: show the next case, take the answer, store it, move on.

Screens, in order of precedence: study closed or locked; paused; practice
feedback; reviewing an earlier answer (only if the study allows revisions);
finished; the current case.

The case is one element, the case panel (components/case_panel.py): viewer,
marker and answer form. Its submit sends one value built from what is on
screen, whatever the gesture; that value carries the case it was drawn for, so
a submit for a case already stored (a double click, a stale tab) is reported,
never stored on the next case. It goes through ``reader_app.exam.commit`` (one
check, one store, the session moved on), by one of two doors: the exam door
(web/exam_door.py), the panel's own POST, after whose acknowledged commit the
panel shows the following case it already holds and asks for a page run that
draws the header and the case after it; or, where the door cannot be reached,
the panel's submit trigger and ``_submit``. When the database does not answer,
the panel keeps the case and the typed answer on screen with a message; Submit
can simply be pressed again.

Drafts (``reader_app.exam.drafts``): the panel reports its draft as it changes and
``_keep_draft`` keeps it for the signed-in reader (as the panel leaves the page,
through the exam door); the case's draft goes back into the panel when it is
drawn, so a reload, another workstation or a server restart finds it. The answer's
store deletes it.

Speed (docs/performance.md): the slot after the one just answered is the next
case's lookup hint (``exam.from_slot``), so drawing case 200 reads what drawing
case 2 reads; the panel fetches and decodes the following case's first images
once the current one is in.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NoReturn

import streamlit as st
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session
from streamlit.runtime.scriptrunner import get_script_run_ctx

from reader_app.core.auth import AuthError
from reader_app.exam.aid import (
    AidError,
    CrossoverStep,
    ModelAnswer,
    crossover_step,
    model_answer,
    pending_aided_view,
    submit_aided,
    submit_unaided,
)
from reader_app.exam.commit import (
    ACCESS_ENDED,
    DB_DOWN,
    case_label,
    commit_answer,
    commit_revision,
    keep_draft,
)
from reader_app.exam.drafts import DraftValues, load_drafts
from reader_app.exam.next_case import CaseView, case_at_slot, upcoming
from reader_app.exam.order import OrderSummary, ensure_order, order_summary
from reader_app.exam.practice import practice_feedback
from reader_app.exam.progress import progress_at
from reader_app.exam.report_submit import ReportAnswer, validate_report
from reader_app.exam.revisions import StoredAnswer, revisable_answer
from reader_app.exam.state import NextUp
from reader_app.exam.submit import (
    Answer,
    AnswerError,
    SubmitResult,
    study_closed_message,
    validate_answer,
)
from reader_app.exam.timing import mark_shown
from reader_app.grounding.store import parse_location_json
from reader_app.models import Reader, utcnow
from reader_app.study.config import StudyConfig, study_settings
from reader_app.ui.components.aid_step import (
    aid_step,
    clear_form,
    final_answer,
    final_report,
    model_box,
)
from reader_app.ui.components.case_panel import (
    ExamDoor,
    PanelCase,
    PanelForm,
    case_panel,
    door_url,
    drafted_value,
    streamlit_path_taken,
    submitted_value,
)
from reader_app.ui.components.case_viewer import show_case_images
from reader_app.ui.components.exam_header import exam_header, is_paused
from reader_app.ui.components.exam_session import exam_state
from reader_app.ui.components.finish_panel import finish_panel, study_closed_panel
from reader_app.ui.components.flash import show_notice
from reader_app.ui.components.image_urls import opening_window
from reader_app.ui.components.pause_screen import pause_screen
from reader_app.ui.components.practice_feedback import practice_feedback_panel
from reader_app.ui.components.report_answer import is_report_case
from reader_app.ui.components.tab_storage import tab_owner
from reader_app.ui.context import (
    current_user,
    db_session,
    load_reader,
    reader_for_callback,
    sign_out,
)

CASE_COLUMNS = [7, 3]  # practice feedback: the image beside the reference answer

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
    exam.start_case(case, now, opening_window(case))
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


def _submit() -> None:
    """The panel's submit through Streamlit (where the exam door cannot be reached): the
    one commit path of ``reader_app.exam.commit``, then the run draws what comes."""
    streamlit_path_taken("answer")
    commit_answer(
        exam,
        submitted_value(),
        reader_id=user.reader_id,
        token_hash=user.token_hash,
        sessions=db_session,
    )


def _submit_aided(case: CaseView) -> None:
    """The aided step's final answer (reader_app/exam/aid.py), stored beside the unaided
    one; a refusal stays above the button and the form keeps what was entered."""
    _store_aid_answer(case, submit_aided, what="final answer")


def _submit_crossover(case: CaseView, arm: str) -> None:
    """A crossover case's one answer in the arm this period gives it (reader_app/exam/aid.py
    checks the arm and the washout again); a refusal stays above the button."""
    store = submit_aided if arm == "aided" else submit_unaided
    _store_aid_answer(case, store, suffix=f"_{case.public_id}", what="answer")


def _store_aid_answer(
    case: CaseView, store: Callable[..., SubmitResult], *, what: str, suffix: str = ""
) -> None:
    """The aid form's answer (``suffix`` as given to ``aid_step``) stored by ``store`` as
    the signed-in reader; a refusal goes above the button, and the form keeps its text."""
    diagnosis, likert, idk = final_answer(suffix)
    st.session_state["aid_error"] = None
    try:
        answer: Answer | ReportAnswer
        if is_report_case(case):  # its final answer is a report, as its first one was
            answer = validate_report(*final_report(suffix), likert, idk)
        else:
            answer = validate_answer(diagnosis, likert, idk)
        with db_session() as session:
            reader = reader_for_callback(session, user)
            if reader is None:
                st.session_state["aid_error"] = ACCESS_ENDED
                return
            result = store(
                session=session,
                reader=reader,
                case_public_id=case.public_id,
                answer=answer,
                shown_at=st.session_state.get("aid_shown_at"),
                image_sha256=case.reader_sha256,
            )
    except (AnswerError, AidError, AuthError) as exc:
        st.session_state["aid_error"] = str(exc)
        return
    except DBAPIError:
        st.session_state["aid_error"] = DB_DOWN
        return
    clear_form(suffix)
    st.session_state.pop("aid_shown_at", None)
    if case.practice:  # a crossover's practice case: its reference answer comes next
        exam.feedback = case
    exam.notice = (
        f"That {what} was already saved."
        if result.duplicate
        else f"Saved your {what} to {case_label(exam, case)}."
    )


def _keep_draft() -> None:
    """The panel's draft, kept for the signed-in reader (``exam.commit.keep_draft``). Never
    said on screen: a draft not kept now stays in the panel and its tab, and the next
    change or the submit sends what is on screen again."""
    streamlit_path_taken("draft")
    keep_draft(
        drafted_value(), reader_id=user.reader_id, token_hash=user.token_hash, sessions=db_session
    )


def _revise() -> None:
    """The panel's changed answer, through the exam's one commit path (its lock too)."""
    outcome = commit_revision(
        exam,
        submitted_value(),
        reader_id=user.reader_id,
        token_hash=user.token_hash,
        sessions=db_session,
    )
    if outcome.stored:
        _leave_review()


def _enter_review(slot: int, limit: int) -> None:
    exam.review = slot
    exam.review_limit = limit


def _leave_review() -> None:
    exam.review = exam.review_limit = exam.review_answer = exam.case = None
    form_error(None)


def _continue() -> None:
    exam.feedback = None


def _note(case: CaseView) -> str | None:
    """What the panel says above the clinical history of ``case``."""
    if case.practice:
        return "Practice case: not scored. The reference answer follows your answer."
    summary = exam.order
    if summary is not None and summary.practice and case.slot == summary.practice:
        return "Practice is over: from this case on, your answers are scored."
    return None


def _form(
    case: CaseView, config: StudyConfig, earlier: StoredAnswer | None, *, shown: bool = True
) -> PanelForm:
    """The answer form of ``case``: an earlier answer being changed, or a new one;
    ``shown``: the case on screen (the one that follows has no refusal yet)."""
    review = earlier is not None
    report = not review and is_report_case(case)
    values = None
    if earlier is not None:
        values = {
            "diagnosis": earlier.diagnosis or "",
            "likert": earlier.likert,
            "idk": earlier.idk,
            "no_focal_finding": parse_location_json(earlier.location_json)[1],
        }
    return PanelForm(
        mode="report" if report else "diagnosis",
        submit_label="Save changed answer"
        if review
        else ("Submit report" if report else "Submit answer"),
        likert_labels=config.likert_labels,
        grounding_required=config.grounding_required,
        form_key="review" if review else "exam",
        values=values,
        error=exam.form_error if shown else None,
        error_field=exam.form_error_field if shown else None,
        attempt=exam.attempt,
    )


def _door() -> ExamDoor | None:
    """The exam door of this browser session (web/exam_door.py), when served with it."""
    ctx = get_script_run_ctx()
    return None if ctx is None else ExamDoor(url=door_url(), session=ctx.session_id)


def _case_screen(
    case: CaseView,
    config: StudyConfig,
    review: bool,
    following: CaseView | None = None,
    *,
    notice: str | None = None,
    draft: DraftValues | None = None,
    following_draft: DraftValues | None = None,
) -> None:
    """The case panel. ``notice`` (what the last submit did) shows in the panel's own
    status line, away from Pause and Submit. ``following``: the case the panel shows
    once the exam door has stored this answer (``exam.following`` says so to the door)."""
    earlier = exam.review_answer if review else None
    shown = PanelCase(
        case,
        _form(case, config, earlier),
        marker=parse_location_json(earlier.location_json if earlier else None)[0],
        history=case.history,
        note=_note(case),
        draft=None if review else draft,
    )
    ahead = None
    upnext = None
    if following is not None and not review:
        ahead = PanelCase(
            following,
            _form(following, config, None, shown=False),
            history=following.history,
            note=_note(following),
            draft=following_draft,
        )
        upnext = NextUp(following, opening_window(following))
    with exam.lock:
        exam.following = upnext
    case_panel(
        shown,
        _revise if review else _submit,
        theme=config.theme,
        grounding=config.grounding,
        notice=notice,
        following=ahead,
        door=None if review else _door(),
        on_draft=None if review else _keep_draft,
        owner=tab_owner(user.reader_id),
        original_values=config.original_values,
    )


def _finish(summary: OrderSummary, config: StudyConfig) -> NoReturn:
    """The finish page: the count, the review where revisions are allowed, Sign out."""
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
        # a sequential AI-aided study: a case answered unaided waits for its aided step
        # (reader_app/exam/aid.py); the model's answer is read only once that row exists
        sequential_aid = config.aid is not None and config.aid.design == "sequential"
        aid_case: CaseView | None = None
        aid_shown: ModelAnswer | None = None
        aid_problem: str | None = None
        if sequential_aid and feedback is None:
            aid_case = pending_aided_view(session, reader, summary.total)
            if aid_case is not None:
                try:
                    aid_shown = model_answer(session, reader, aid_case.public_id)
                except AidError as exc:
                    aid_problem = str(exc)
        # a crossover AI-aided study: each case read once per period in the arm the
        # reader's group gives it, period 2 only after the washout (reader_app/exam/aid.py)
        cross: CrossoverStep | None = None
        if config.aid is not None and config.aid.design == "crossover" and feedback is None:
            cross = crossover_step(session, reader, summary.total, now=utcnow)
            if cross.case is not None and cross.arm == "aided":
                try:
                    aid_shown = model_answer(session, reader, cross.case.public_id, now=utcnow)
                except AidError as exc:
                    aid_problem = str(exc)
        review_slot = exam.review if config.allow_revisions else None
        review_shown: ModelAnswer | None = None
        stored: StoredAnswer | None = None
        case: CaseView | None = None
        following: CaseView | None = None
        draft: DraftValues | None = None
        following_draft: DraftValues | None = None
        if review_slot is not None:
            case = case_at_slot(
                session=session, reader=reader, slot=review_slot, total=summary.total
            )
            if case is not None:
                # the row that may change (an AI-aided study: exam.aid.revisable_arm)
                stored = revisable_answer(
                    session=session, reader=reader, case_public_id=case.public_id
                )
            if case is not None and stored is not None and stored.arm == "aided":
                try:  # an aided answer is changed with the model's answer beside it
                    review_shown = model_answer(
                        session, reader, case.public_id, now=utcnow, revising=True
                    )
                except AidError:
                    review_shown = None
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
            if case is not None:
                ids = [c.public_id for c in (case, following) if c is not None]
                drafts = load_drafts(session=session, reader_id=user.reader_id, case_public_ids=ids)
                draft = drafts.get(case.public_id)
                following_draft = drafts.get(following.public_id) if following else None
except DBAPIError:
    _database_down()

notice, exam.notice = exam.notice, None

if closed is not None:
    exam_header(config.title, progress_at(case.slot if case else None, summary), pausable=False)
    show_notice(notice)
    study_closed_panel(closed)
    st.stop()

if is_paused():
    exam_header(config.title, progress_at(case.slot if case else None, summary), pausable=False)
    show_notice(notice)
    pause_screen(sign_out)
    st.stop()

if feedback is not None and feedback_case is not None:
    exam_header(config.title, progress_at(feedback_case.slot, summary), pausable=False)
    left, right = st.columns(CASE_COLUMNS, gap="medium")
    with left:
        show_case_images(feedback_case, theme=config.theme)
    with right:
        practice_feedback_panel(feedback, config.likert_labels, _continue, notice=notice)
    st.stop()
exam.feedback = None

if cross is not None and review_slot is None:
    back = None  # revisions: the rows of this period, while it lasts (exam.aid.revisable_arm)
    if config.allow_revisions and cross.case is not None and cross.case.slot > summary.practice:
        back = partial(_enter_review, cross.case.slot - 1, cross.case.slot)
    exam_header(
        config.title,
        progress_at(cross.case.slot if cross.case else None, summary),
        pausable=cross.case is not None,
        on_back=back,
    )
    show_notice(notice)
    if cross.period == 0:
        assert cross.reopens is not None
        st.info(
            "You have read every case of the first period. The second period opens after "
            f"the washout, on {cross.reopens:%Y-%m-%d at %H:%M} UTC: come back then, "
            "with the same link."
        )
        st.stop()
    if cross.case is None:
        _finish(summary, config)
    if cross.arm == "aided" and aid_shown is None:
        st.error(f"{aid_problem} Ask the study coordinator.")
        st.stop()
    st.session_state.setdefault("aid_shown_at", utcnow())
    st.caption(f"Period {cross.period} of 2.")
    aid_step(
        cross.case,
        aid_shown if cross.arm == "aided" else None,
        config.likert_labels,
        partial(_submit_crossover, cross.case, cross.arm or "unaided"),
        theme=config.theme,
        error=st.session_state.get("aid_error"),
        crossover=True,
        report=is_report_case(cross.case),
        suffix=f"_{cross.case.public_id}",
    )
    st.stop()

if aid_case is not None:
    exam_header(config.title, progress_at(aid_case.slot, summary), pausable=False)
    show_notice(notice)
    if aid_shown is None:
        st.error(f"{aid_problem} Ask the study coordinator.")
        st.stop()
    st.session_state.setdefault("aid_shown_at", utcnow())
    aid_step(
        aid_case,
        aid_shown,
        config.likert_labels,
        partial(_submit_aided, aid_case),
        theme=config.theme,
        error=st.session_state.get("aid_error"),
        report=is_report_case(aid_case),
    )
    st.stop()

if review_slot is not None and case is not None and stored is not None:
    limit = exam.review_limit if exam.review_limit is not None else summary.total
    if exam.case is None or exam.case.public_id != case.public_id:
        _start_case(case, config)
        exam.review_answer = stored
    exam_header(config.title, progress_at(case.slot, summary), pausable=False)
    which = "final answer" if stored.arm == "aided" else "earlier answer"
    st.warning(
        f"You are changing your {which} to case {case.slot + 1 - summary.practice}. "
        "The earlier answer is kept in the study's history."
    )
    if review_shown is not None:
        model_box(review_shown, config.likert_labels)
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
    _case_screen(case, config, review=True, notice=notice)
    st.stop()

if case is None:
    exam_header(config.title, progress_at(None, summary), pausable=False)
    show_notice(notice)
    _finish(summary, config)

assert case is not None
with exam.lock:
    if case.slot < exam.from_slot:
        st.rerun()  # the exam door stored this case's answer while this run read it
    if exam.case is None or exam.case.public_id != case.public_id:
        _start_case(case, config)
exam_header(
    config.title,
    progress_at(case.slot, summary),
    pausable=True,
    # the slot to change, and the review's limit
    on_back=partial(_enter_review, case.slot - 1, case.slot)
    if config.allow_revisions and case.slot > summary.practice
    else None,
)
_case_screen(
    case,
    config,
    review=False,
    # an aided study's next step is the model's answer, drawn by the page: the panel
    # holds no following case to show by itself
    following=None if sequential_aid else following,
    notice=notice,
    draft=draft,
    following_draft=following_draft,
)
