"""One submitted answer, from the panel's value to the stored row and the case shown next.

The exam's one submit path. Two doors lead here with the same value (the panel's,
``exam.submission``): the exam door (``web/exam_door.py``, the panel's own POST: the
answer is committed and acknowledged before the panel shows the next case, which it
already holds decoded) and the panel's Streamlit trigger (the exam page's callback,
used where the door cannot be reached). Either way the value is read and checked once,
stored once as the signed-in reader, and the session's :class:`ExamState` moves on:
the message to say, practice feedback, the next case's hint and, when the panel is
shown the case that follows, that case's clocks (started at the commit, when it
appears). ``state.lock`` keeps the two doors and the page's own drawing apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError, signed_in_reader
from reader_app.exam.drafts import DraftRefused, save_draft
from reader_app.exam.next_case import CaseView
from reader_app.exam.report_submit import ReportAnswer, submit_report
from reader_app.exam.revisions import revise_answer
from reader_app.exam.state import ExamState
from reader_app.exam.submission import (
    CheckedSubmission,
    check_submission,
    read_draft,
    read_submission,
)
from reader_app.exam.submit import AnswerError, SubmitResult, submit_answer
from reader_app.exam.timing import active_ms, mark_shown
from reader_app.models import Case, Reader, Response, utcnow
from reader_app.study.case_reports import answer_mode

DB_DOWN = (
    "The study's database is not answering right now, so your answer is not saved yet. "
    "It is still here: press Submit again in a moment. It will be stored once."
)
ACCESS_ENDED = "Your access has ended. Ask the study coordinator."
ALREADY_SAVED = "That answer was already saved; your second submit changed nothing."
NOT_CURRENT = (
    "That answer is for a case that is not the one on screen now, so it was not saved. "
    "Answer the case shown."
)


@dataclass(frozen=True)
class Outcome:
    """What one submit did, as the panel is told (``web/exam_door.py`` sends it as JSON)."""

    stored: bool  # the answer is committed (or was already: ``duplicate``)
    notice: str | None = None  # "Saved your answer to case 3."
    error: str | None = None  # a refusal, shown above Submit; the form keeps its input
    field: str | None = None  # the field the refusal is about
    duplicate: bool = False
    shown: str | None = None  # the case now current, the one the panel holds next; None:
    # the page draws what comes (practice feedback, the end, a case the panel lacks)
    attempt: int | None = None  # the submit's number (``ExamState.attempt``): a page run
    # drawn before it (an older attempt) does not overrule what this outcome says

    def json(self) -> dict[str, Any]:
        return asdict(self)


def case_label(state: ExamState, case: CaseView) -> str:
    practice = state.order.practice if state.order else 0
    return f"practice case {case.number}" if case.practice else f"case {case.number - practice}"


def commit_answer(
    state: ExamState,
    value: object,
    *,
    reader_id: int,
    token_hash: str | None,
    sessions: Callable[[], Session],
    now: Callable[[], datetime] = utcnow,
) -> Outcome:
    """Read, check and store the panel's ``value`` as the reader's answer to the case on
    screen, and move ``state`` on. Never raises for what a reader or the database can
    cause: a refusal is an Outcome with ``error`` (and the form's message in ``state``)."""
    return _locked(state, lambda: _commit(state, value, reader_id, token_hash, sessions, now))


def commit_revision(
    state: ExamState,
    value: object,
    *,
    reader_id: int,
    token_hash: str | None,
    sessions: Callable[[], Session],
) -> Outcome:
    """Read, check and store the panel's ``value`` as the reader's changed answer to the
    earlier case under review (``state.review_answer``): the same path as a new answer,
    under the same lock; the earlier answer goes into the history (``exam.revisions``)."""
    return _locked(state, lambda: _revise(state, value, reader_id, token_hash, sessions))


def _locked(state: ExamState, attempt: Callable[[], Outcome]) -> Outcome:
    """One submit under the state's lock: counted, and its refusal put on the form."""
    with state.lock:
        state.attempt += 1
        outcome = attempt()
        if outcome.error is not None:
            state.refuse(outcome.error, outcome.field)
        elif not outcome.stored:
            state.refuse(None)
        return replace(outcome, attempt=state.attempt)


def _revise(
    state: ExamState,
    value: object,
    reader_id: int,
    token_hash: str | None,
    sessions: Callable[[], Session],
) -> Outcome:
    try:
        sub = read_submission(value)
    except AnswerError as exc:
        return Outcome(stored=False, error=str(exc), field=exc.field)
    case, config, earlier = state.case, state.config, state.review_answer
    if case is None or config is None or sub.case_token != case.public_id:
        state.notice = ALREADY_SAVED  # a stale tab: nothing under review is this case
        return Outcome(stored=False, notice=ALREADY_SAVED)
    if earlier is None:
        return Outcome(stored=False)
    try:
        checked = check_submission(
            sub,
            case,
            report=False,  # a revision is a diagnosis answer
            grounding=config.grounding,
            grounding_required=config.grounding_required,
        )
        answer = checked.answer
        assert not isinstance(answer, ReportAnswer)
        with sessions() as session:
            reader = signed_in_reader(session, reader_id, token_hash)
            if reader is None:
                return Outcome(stored=False, error=ACCESS_ENDED)
            revise_answer(
                session=session,
                reader=reader,
                config=config,
                case_public_id=case.public_id,
                answer=answer,
                seen_revision=earlier.revision,
                arm=earlier.arm,
                location_json=checked.location_json,
                # the revision's own figures (the panel counts them afresh on the review
                # screen); the time must fit within the time since that screen was drawn
                active_ms=active_ms(
                    checked.active_ms, first_shown_at=None, shown_at=state.shown_at
                ),
                interaction=checked.interaction,
            )
    except (AnswerError, AuthError) as exc:
        return Outcome(stored=False, error=str(exc), field=getattr(exc, "field", None))
    except DBAPIError:
        return Outcome(stored=False, error=DB_DOWN)
    state.notice = f"Your changed answer to {case_label(state, case)} is saved."
    return Outcome(stored=True, notice=state.notice)


def _commit(
    state: ExamState,
    value: object,
    reader_id: int,
    token_hash: str | None,
    sessions: Callable[[], Session],
    now: Callable[[], datetime],
) -> Outcome:
    try:
        sub = read_submission(value)
    except AnswerError as exc:
        return Outcome(stored=False, error=str(exc), field=exc.field)
    case, config = state.case, state.config
    if case is None or config is None or sub.case_token != case.public_id:
        # drawn for a case whose answer is stored (a double click, a stale tab), or for a
        # case that is not the current one: say which, and leave the current case's form
        notice = ALREADY_SAVED if _answered(sessions, reader_id, sub.case_token) else NOT_CURRENT
        state.notice = notice
        return Outcome(stored=False, notice=notice)
    try:
        with sessions() as session:
            reader = signed_in_reader(session, reader_id, token_hash)
            if reader is None:
                return Outcome(stored=False, error=ACCESS_ENDED)
            mode = state.answer_mode(
                case.public_id,
                lambda: answer_mode(session=session, case_public_id=case.public_id),
            )
            report = mode == "report"
            checked = check_submission(
                sub,
                case,
                report=report,
                grounding=config.grounding,
                grounding_required=config.grounding_required,
            )
            result = _store(session, reader, state, case, checked)
            shown = _advance(state, case, result, session, reader_id, now)
    except (AnswerError, AuthError) as exc:
        return Outcome(stored=False, error=str(exc), field=getattr(exc, "field", None))
    except DBAPIError:
        return Outcome(stored=False, error=DB_DOWN)
    return Outcome(stored=True, notice=state.notice, duplicate=result.duplicate, shown=shown)


class StoreContext(TypedDict):
    """What ``submit_answer`` and ``submit_report`` take besides the answer: typed, so
    both calls are checked against their signatures."""

    session: Session
    reader: Reader
    case_public_id: str
    shown_at: datetime | None
    image_sha256: list[str]
    meta: dict[str, object] | None
    interaction: dict[str, object] | None
    active_ms: int | None
    location_json: str | None


def _store(
    session: Session, reader: Reader, state: ExamState, case: CaseView, checked: CheckedSubmission
) -> SubmitResult:
    """Commit the answer with what the session knows of the case: times, images, viewer use."""
    context: StoreContext = {
        "session": session,
        "reader": reader,
        "case_public_id": case.public_id,
        "shown_at": state.shown_at,
        "image_sha256": case.reader_sha256,
        "meta": {
            "paused_s": round(state.paused_s, 1),
            "windows": sorted(w for w in state.windows_seen if w),
            "enlarged": False,  # kept for older answers: full screen is in the viewer record
        },
        "interaction": checked.interaction,
        "active_ms": active_ms(
            checked.active_ms,
            first_shown_at=state.first_shown_at,
            shown_at=state.shown_at,
            paused_s=state.paused_s,
        ),
        "location_json": checked.location_json,
    }
    if isinstance(checked.answer, ReportAnswer):
        return submit_report(answer=checked.answer, **context)
    return submit_answer(answer=checked.answer, **context)


def _advance(
    state: ExamState,
    case: CaseView,
    result: SubmitResult,
    session: Session,
    reader_id: int,
    now: Callable[[], datetime],
) -> str | None:
    """The stored answer's aftermath in ``state``; the case now shown, when the panel
    holds it (the one after ``case``, not after a practice case: its reference comes)."""
    if result.duplicate:
        state.notice = (
            f"Your answer to {case_label(state, case)} was already saved (in another tab?); "
            "that answer is kept."
        )
    else:
        state.notice = f"Saved your answer to {case_label(state, case)}."
    state.from_slot = case.slot + 1
    state.case = None
    ahead, state.following = state.following, None
    if case.practice:
        state.feedback = case
        return None
    if ahead is None or ahead.case.slot <= case.slot:
        return None
    at = now()
    state.start_case(ahead.case, at, ahead.window)
    try:
        state.first_shown_at = mark_shown(
            session=session, reader_id=reader_id, case_public_id=ahead.case.public_id, at=at
        )
    except DBAPIError:
        session.rollback()
        state.first_shown_at = None  # the answer is stored; the times fall back to shown_at
    return ahead.case.public_id


def _answered(sessions: Callable[[], Session], reader_id: int, case_token: str) -> bool:
    """Whether this reader has an answer stored for the case of this public id (False
    when the database cannot tell: the notice then does not claim a save)."""
    try:
        with sessions() as session:
            found = session.exec(
                select(Response.id)
                .join(Case, col(Case.id) == Response.case_id)
                .where(Case.public_id == case_token, Response.reader_id == reader_id)
            ).first()
    except DBAPIError:
        return False
    return found is not None


def keep_draft(
    value: object,
    *,
    reader_id: int,
    token_hash: str | None,
    sessions: Callable[[], Session],
) -> bool:
    """Keep the panel's draft ``value`` for the signed-in reader; False when it is not
    kept now (not the panel's shape, a case already answered, access ended, the database
    out of reach): the panel and its tab still hold it, and send it again."""
    return keep_draft_said(
        value, reader_id=reader_id, token_hash=token_hash, sessions=sessions
    ).kept


@dataclass(frozen=True)
class DraftOutcome:
    """Whether a draft was kept, and if not, why, in words for the reader."""

    kept: bool
    notice: str | None = None

    def json(self) -> dict[str, Any]:
        return {"kept": self.kept} if self.kept else {"kept": False, "notice": self.notice}


def keep_draft_said(
    value: object,
    *,
    reader_id: int,
    token_hash: str | None,
    sessions: Callable[[], Session],
) -> DraftOutcome:
    """:func:`keep_draft`, saying why a draft is not kept (the exam door's reply)."""
    try:
        values = read_draft(value)
    except AnswerError as exc:
        return DraftOutcome(False, str(exc))
    try:
        with sessions() as session:
            reader = signed_in_reader(session, reader_id, token_hash)
            if reader is None:
                return DraftOutcome(False, ACCESS_ENDED)
            save_draft(session=session, reader=reader, values=values)
    except (DraftRefused, AuthError) as exc:
        return DraftOutcome(False, str(exc))
    except DBAPIError:
        return DraftOutcome(False, "The draft could not be saved just now; it is sent again.")
    return DraftOutcome(True)
