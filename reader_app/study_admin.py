"""Opening, locking and closing a study: the coordinator's switch, audited.

``open``: readers answer. ``locked``: a pause; readers are told to come back
later and nothing they send is stored (exam.submit refuses it), and the
coordinator can reopen. ``closed``: the study is over; it takes no answers
and cannot be reopened, so the data set an analysis was run on stays put.
Every change is an audit event with the old and the new state.
"""

from __future__ import annotations

from typing import Final

from sqlmodel import Session

from reader_app.core.audit import record_event
from reader_app.core.auth import require_role
from reader_app.core.errors import ReaderStudyError
from reader_app.models import STUDY_STATES, Reader, Study

# state -> the states a coordinator may move it to
TRANSITIONS: Final[dict[str, tuple[str, ...]]] = {
    "open": ("locked", "closed"),
    "locked": ("open", "closed"),
    "closed": (),
}
ACTIONS: Final = {"open": "study.reopen", "locked": "study.lock", "closed": "study.close"}


class StudyStateError(ReaderStudyError, ValueError):
    """The change is not allowed; the message is safe to show."""


def allowed_states(state: str) -> tuple[str, ...]:
    return TRANSITIONS.get(state, ())


def set_study_state(*, session: Session, actor: Reader, state: str) -> Study:
    """Move the actor's study to ``state`` (coordinators only); commit and audit."""
    require_role(actor, "coordinator")
    if state not in STUDY_STATES:
        raise StudyStateError(f"state must be one of {', '.join(STUDY_STATES)}, not {state!r}")
    study = session.get(Study, actor.study_id)
    if study is None:
        raise StudyStateError("This study no longer exists.")
    session.refresh(study)  # decide on the stored state, not a stale copy
    if study.state == state:
        return study
    if state not in allowed_states(study.state):
        raise StudyStateError(f"A {study.state} study cannot be set to {state}.")
    previous = study.state
    study.state = state
    session.add(study)
    record_event(
        session=session,
        actor=actor.code,
        action=ACTIONS[state],
        study_id=study.id,
        previous=previous,
        state=state,
    )
    session.commit()
    return study
