"""Drafts as the exam door keeps them (exam/commit.keep_draft_said), issue 39, on SQLite
and PostgreSQL: refused and said while the study is closed or paused or the reader's
access has ended (answers are refused then too); a draft's time bounded by the
server's clock, so a far-future ``edited_at`` (a wrong browser clock) cannot pin it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from sqlmodel import Session, select

from reader_app.core.auth import hash_token, revoke_invite
from reader_app.core.settings import Settings
from reader_app.exam.commit import ACCESS_ENDED, keep_draft_said
from reader_app.exam.drafts import DRAFT_STUDY_MESSAGES
from reader_app.models import ExamDraft, Reader, Study
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_drafts import _cases, _value

YEAR_2100_MS = 4_102_444_800_000  # 2100-01-01T00:00:00Z in ms since the epoch


def _setup(session: Session, settings: Settings) -> tuple[Study, int, str, str, list[str]]:
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study, ready=True)
    session.commit()
    assert invite.reader.id is not None
    return (
        study,
        invite.reader.id,
        hash_token(invite.token),
        invite.token,
        _cases(session, invite.reader),
    )


def _sessions(session: Session) -> Callable[[], Session]:
    return partial(Session, session.get_bind(), expire_on_commit=False)


def _kept(session: Session) -> list[str | None]:
    with Session(session.get_bind()) as fresh:
        return [d.diagnosis for d in fresh.exec(select(ExamDraft)).all()]


def test_a_far_future_draft_does_not_pin_later_drafts(session: Session, settings: Settings) -> None:
    _, reader_id, token_hash, _, (case, _) = _setup(session, settings)
    keep = partial(
        keep_draft_said, reader_id=reader_id, token_hash=token_hash, sessions=_sessions(session)
    )
    # a browser whose clock says 2100 ...
    assert keep(_value(case, diagnosis="Future", edited_at=YEAR_2100_MS)).kept
    with Session(session.get_bind()) as fresh:
        kept_ms = fresh.exec(select(ExamDraft)).one().edited_at_ms
    assert kept_ms is not None and kept_ms < YEAR_2100_MS  # kept as edited now (server clock)
    # ... then the same reader on a right clock, later: the newer draft replaces it
    assert keep(_value(case, diagnosis="Later", edited_at=kept_ms + 1)).kept
    assert _kept(session) == ["Later"]
    # an older report (a tab re-sending its last draft after a restart) still changes nothing
    assert keep(_value(case, diagnosis="Stale", edited_at=kept_ms - 60_000)).kept
    assert _kept(session) == ["Later"]


def test_drafts_are_refused_and_said_while_the_study_is_closed_or_paused(
    session: Session, settings: Settings
) -> None:
    study, reader_id, token_hash, _, (case, _) = _setup(session, settings)
    keep = partial(
        keep_draft_said, reader_id=reader_id, token_hash=token_hash, sessions=_sessions(session)
    )
    for state in ("closed", "locked"):
        study.state = state
        session.add(study)
        session.commit()
        said = keep(_value(case, diagnosis=f"While {state}"))
        assert (said.kept, said.notice) == (False, DRAFT_STUDY_MESSAGES[state])
        assert said.json() == {"kept": False, "notice": DRAFT_STUDY_MESSAGES[state]}
    assert _kept(session) == []  # nothing stored
    study.state = "open"
    session.add(study)
    session.commit()
    assert keep(_value(case, diagnosis="Open again")).json() == {"kept": True}
    assert _kept(session) == ["Open again"]


def test_a_draft_after_access_ended_is_refused_and_said(
    session: Session, settings: Settings
) -> None:
    _, reader_id, token_hash, _, (case, _) = _setup(session, settings)
    with Session(session.get_bind()) as other:
        reader = other.get(Reader, reader_id)
        assert reader is not None
        revoke_invite(session=other, reader=reader, actor="coordinator")
        other.commit()
    said = keep_draft_said(
        _value(case), reader_id=reader_id, token_hash=token_hash, sessions=_sessions(session)
    )
    assert (said.kept, said.notice) == (False, ACCESS_ENDED)
    assert _kept(session) == []
