"""The coordinator's services: reader progress, grading progress, case bank, invites,
and locking or closing the study; each refuses every other role."""

from __future__ import annotations

import json
from datetime import timedelta

import pandas as pd
import pytest
from sqlmodel import Session, select

from reader_app.analysis.coordinator import case_bank, grading_progress, reader_progress
from reader_app.analysis.invites import (
    InviteError,
    create_invites,
    parse_invite_lines,
    people,
    revoke,
)
from reader_app.core.auth import AuthError, authenticate
from reader_app.core.settings import Settings
from reader_app.exam.submit import AnswerError, submit_answer, validate_answer
from reader_app.models import AuditEvent, Reader, utcnow
from reader_app.study.admin import StudyStateError, set_study_state
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

CASES = ["case-001", "case-002", "case-003", "case-004"]


def _coordinator(session: Session, study) -> Reader:  # type: ignore[no-untyped-def]
    return make_reader(session, study, code="COORD", role="coordinator").reader


def test_reader_progress_lists_everyone(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4, n_practice=1)
    simulate_reader(session, study, "R-done", plan_for(CASES, "CCwI"), seconds=40)
    simulate_reader(session, study, "R-half", plan_for(CASES, "Cw.."), seconds=20)
    make_reader(session, study, code="R-new", group="PGY1")
    gone = make_reader(session, study, code="R-gone").reader
    import_model_run(session, study, "run-x", plan_for(CASES, "CCCC"))
    coordinator = _coordinator(session, study)
    revoke(session=session, actor=coordinator, code="R-gone")

    rows = reader_progress(session=session, actor=coordinator).set_index("reader")
    assert list(rows.index) == ["R-done", "R-gone", "R-half", "R-new"]  # readers only
    assert (
        rows.loc["R-done", "status"] == "finished" and rows.loc["R-done", "completion_pct"] == 100
    )
    assert rows.loc["R-half", "status"] == "in progress" and rows.loc["R-half", "answered"] == 2
    assert rows.loc["R-half", "completion_pct"] == 50.0
    assert rows.loc["R-new", "status"] == "not started" and rows.loc["R-new", "answered"] == 0
    assert rows.loc["R-gone", "status"] == "revoked" and gone.id is not None
    assert rows.loc["R-done", "median_s_per_case"] == pytest.approx(40, abs=2)
    assert pd.isna(rows.loc["R-new", "median_s_per_case"])
    assert pd.isna(rows.loc["R-new", "last_activity"])
    assert not rows["stalled"].any()  # everyone was active or invited just now

    later = reader_progress(session=session, actor=coordinator, now=utcnow() + timedelta(days=3))
    stalled = set(later.loc[later["stalled"], "reader"])
    assert stalled == {"R-half", "R-new"}  # finished and revoked readers never stall

    for role in ("reader", "analyst", "adjudicator"):
        other = make_reader(session, study, code=f"X-{role}", role=role).reader
        with pytest.raises(AuthError, match="coordinator"):
            reader_progress(session=session, actor=other)


def test_grading_progress_and_case_bank(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4, strip_every=2, montage=True)
    cases = ["case-000", "case-001", "case-002", "case-003"]
    simulate_reader(session, study, "R01", plan_for(cases, "CwWI"))
    coordinator = _coordinator(session, study)
    progress = grading_progress(session=session, actor=coordinator)
    # three answered rows, three distinct answers: one the key matches, two need a human
    assert (progress.answers, progress.items, progress.graded_items) == (3, 3, 0)
    assert (progress.key_ready_items, progress.waiting_items) == (1, 2)
    grade_everything(session, study)
    progress = grading_progress(session=session, actor=coordinator)
    assert progress.by_source == {"adjudicator": 2, "key": 1}
    assert progress.pct_answers_graded == 100.0

    cards = case_bank(session=session, actor=coordinator)
    assert [c.source_id for c in cards] == cases
    strip = next(c for c in cards if c.kind == "strip")
    assert strip.n_images == 5 and strip.thumbnail_sha256 is not None  # 4 slices + montage
    assert cards[0].answers == 1 and cards[3].answers == 1
    analyst = make_reader(session, study, code="AN", role="analyst").reader
    with pytest.raises(AuthError):
        case_bank(session=session, actor=analyst)


def test_invites_created_in_bulk_and_revoked(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    coordinator = _coordinator(session, study)
    requests = parse_invite_lines(
        '# code,group,email\nR10,PGY2\nR11,board-certified,Dr.X@Example.org\n\n"R,12"\n'
    )
    assert [r.code for r in requests] == ["R10", "R11", "R,12"]
    links = create_invites(
        session=session,
        actor=coordinator,
        requests=requests,
        role="reader",
        base_url="https://reader.example.org/",
    )
    assert [link.code for link in links] == ["R10", "R11", "R,12"]
    assert all(link.link.startswith("https://reader.example.org/?token=") for link in links)
    token = links[0].link.split("token=")[1]
    assert authenticate(session=session, token=token).code == "R10"
    assert links[1].email == "dr.x@example.org"  # OIDC matching is by normalized address

    listed = people(session=session, actor=coordinator).set_index("code")
    assert listed.loc["R11", "access"] == "active" and "link" not in listed.columns

    revoke(session=session, actor=coordinator, code="R10")
    with pytest.raises(AuthError, match="revoked"):
        authenticate(session=session, token=token)
    with pytest.raises(AuthError, match="your own"):
        revoke(session=session, actor=coordinator, code="COORD")
    with pytest.raises(InviteError, match="yourself"):
        create_invites(
            session=session,
            actor=coordinator,
            requests=parse_invite_lines("COORD"),
            role="analyst",
            base_url="http://x",
        )
    for bad, message in [("", "at least one"), ("A\nA", "twice"), ("A,g,not-mail", "email")]:
        with pytest.raises(InviteError, match=message):
            parse_invite_lines(bad)
    analyst = create_invites(
        session=session,
        actor=coordinator,
        requests=parse_invite_lines("AN1"),
        role="analyst",
        base_url="http://x",
    )[0]
    assert analyst.role == "analyst"
    reader = session.exec(select(Reader).where(Reader.code == "R11")).one()
    with pytest.raises(AuthError):
        create_invites(
            session=session, actor=reader, requests=requests, role="analyst", base_url="http://x"
        )


def test_lock_reopen_and_close_are_audited(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    coordinator = _coordinator(session, study)
    reader = make_reader(session, study, code="R01", ready=True).reader
    simulate_reader(session, study, "R02", {})  # ordered, nothing answered yet

    set_study_state(session=session, actor=coordinator, state="locked")
    from reader_app.exam.next_case import next_case
    from reader_app.exam.order import ensure_order

    ensure_order(session=session, reader=reader)
    view = next_case(session=session, reader=reader)
    assert view is not None
    with pytest.raises(AnswerError, match="paused"):
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=view.public_id,
            answer=validate_answer("x", 2, False),
            shown_at=None,
            image_sha256=view.image_sha256,
        )
    set_study_state(session=session, actor=coordinator, state="open")
    set_study_state(session=session, actor=coordinator, state="closed")
    with pytest.raises(StudyStateError, match="closed study cannot be set to open"):
        set_study_state(session=session, actor=coordinator, state="open")
    with pytest.raises(AuthError):
        set_study_state(session=session, actor=reader, state="open")
    events = session.exec(
        select(AuditEvent).where(AuditEvent.action.startswith("study."))  # type: ignore[attr-defined]
    ).all()
    assert [(e.action, json.loads(e.detail_json)["previous"]) for e in events] == [
        ("study.lock", "open"),
        ("study.reopen", "locked"),
        ("study.close", "open"),
    ]
    assert {e.actor for e in events} == {"COORD"}
