"""Revisions in an AI-aided study (exam/revisions.py with exam/aid.revisable_arm), on
SQLite and PostgreSQL: a case has a row per arm, and a revision changes only the row
it names, when that row may change. Sequential: the final (aided) answer may change,
the unaided one (given before the model's) is final. Crossover: the row of the current
period may change while the period lasts; period 1's rows are final once it is read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlmodel import Session, col, select

from reader_app.core.settings import Settings
from reader_app.exam import aid
from reader_app.exam.order import ensure_order
from reader_app.exam.revisions import (
    answer_history,
    revisable_answer,
    revisable_slots,
    revise_answer,
)
from reader_app.exam.submit import AnswerError, submit_answer, validate_answer
from reader_app.models import Case, Reader, Response
from reader_app.study.config import study_settings
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import SEQUENTIAL, add_run, answer_unaided, crossover

REVISABLE: dict[str, object] = {"allow_revisions": True}


def rows(session: Session, reader: Reader, case_id: int) -> dict[str, tuple[Any, ...]]:
    """{arm: (diagnosis, likert, revision)} of the reader's rows on the case."""
    session.expire_all()
    found = session.exec(
        select(Response).where(Response.reader_id == reader.id, Response.case_id == case_id)
    ).all()
    return {r.arm: (r.diagnosis, r.likert, r.revision) for r in found}


def test_sequential_revision_changes_the_aided_row_only(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, config={**SEQUENTIAL, **REVISABLE})
    add_run(session, study)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    config = study_settings(study)
    public_id = answer_unaided(session, reader)  # "Pneumothorax" at 3
    case = session.exec(select(Case).where(Case.public_id == public_id)).one()
    assert case.id is not None
    # the model's answer is shown as soon as the unaided row exists: it is final
    assert revisable_answer(session=session, reader=reader, case_public_id=public_id) is None
    with pytest.raises(AnswerError, match="given before the model's, is final"):
        revise_answer(
            session=session,
            reader=reader,
            config=config,
            case_public_id=public_id,
            answer=validate_answer("Changed own", 1, False),
            seen_revision=0,
            arm="unaided",
        )
    aid.submit_aided(
        session=session,
        reader=reader,
        case_public_id=public_id,
        answer=validate_answer("Model says it", 4, False),
        shown_at=None,
        image_sha256=[],
    )
    before = rows(session, reader, case.id)
    assert before == {"unaided": ("Pneumothorax", 3, 0), "aided": ("Model says it", 4, 0)}
    assert revisable_slots(session=session, reader=reader) == [0]  # one slot, two rows
    earlier = revisable_answer(session=session, reader=reader, case_public_id=public_id)
    assert earlier is not None and earlier.arm == "aided" and earlier.diagnosis == "Model says it"
    changed = revise_answer(
        session=session,
        reader=reader,
        config=config,
        case_public_id=public_id,
        answer=validate_answer("Pneumothorax after all", 2, False),
        seen_revision=earlier.revision,
        arm=earlier.arm,
    )
    assert changed.arm == "aided" and changed.response_id == earlier.response_id
    assert rows(session, reader, case.id) == {
        "unaided": ("Pneumothorax", 3, 0),  # untouched
        "aided": ("Pneumothorax after all", 2, 1),
    }
    history = answer_history(session=session, response_id=changed.response_id)
    assert [(h.diagnosis, h.likert) for h in history] == [("Model says it", 4)]
    # the unaided row is still final, and refusing it changed nothing
    with pytest.raises(AnswerError, match="final"):
        revise_answer(
            session=session,
            reader=reader,
            config=config,
            case_public_id=public_id,
            answer=validate_answer("Changed own", 1, False),
            seen_revision=0,
            arm="unaided",
        )
    assert rows(session, reader, case.id)["unaided"] == ("Pneumothorax", 3, 0)


def test_crossover_revision_within_the_period_only(session: Session, settings: Settings) -> None:
    """Period 1: a row read in it may change while period 1 lasts, and only that row.
    After period 1 (washout, then period 2) it is final; in period 2 the case's
    period-2 row may change, never its period-1 row."""
    study = make_study(session, settings.asset_dir, n_cases=4, config={**crossover(3), **REVISABLE})
    add_run(session, study)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    config = study_settings(study)
    clock = {"now": datetime(2026, 3, 1, 8, 0, tzinfo=UTC)}

    def now() -> datetime:
        return clock["now"]

    def read_one() -> tuple[str, int, str]:
        step = aid.crossover_step(session, reader, 4, now=now)
        assert step.case is not None and step.arm is not None
        store = aid.submit_aided if step.arm == "aided" else aid.submit_unaided
        store(
            session=session,
            reader=reader,
            case_public_id=step.case.public_id,
            answer=validate_answer(f"{step.arm} {step.period}", 2, False),
            shown_at=None,
            image_sha256=step.case.reader_sha256,
            now=now,
        )
        case_id = session.exec(select(Case.id).where(Case.public_id == step.case.public_id)).one()
        assert case_id is not None
        return step.case.public_id, case_id, step.arm

    def revise(public_id: str, arm: str, text: str) -> None:
        seen = session.exec(
            select(Response.revision)
            .join(Case, col(Case.id) == Response.case_id)
            .where(Case.public_id == public_id, Response.reader_id == reader.id)
            .where(Response.arm == arm)
        ).one()
        revise_answer(
            session=session,
            reader=reader,
            config=config,
            case_public_id=public_id,
            answer=validate_answer(text, 1, False),
            seen_revision=seen,
            arm=arm,
            now=now,
        )

    first, first_id, first_arm = read_one()
    earlier = revisable_answer(session=session, reader=reader, case_public_id=first, now=now)
    assert earlier is not None and earlier.arm == first_arm
    revise(first, first_arm, "changed in period 1")
    assert rows(session, reader, first_id) == {first_arm: ("changed in period 1", 1, 1)}
    for _ in range(3):
        read_one()
    ends = aid.washout_ends(session, reader)
    assert ends is not None
    clock["now"] = ends  # period 2 opens: period 1's rows are final
    with pytest.raises(AnswerError, match="final"):
        revise(first, first_arm, "too late")
    assert revisable_answer(session=session, reader=reader, case_public_id=first, now=now) is None
    # period 2 reads every case again in the other arm; each case's period-2 row may
    # change (aided on half the cases, unaided on the other half), never its period-1 row
    period_1 = {
        case_id: rows(session, reader, case_id)
        for case_id in session.exec(select(Case.id).where(Case.study_id == study.id)).all()
        if case_id is not None
    }
    read = [read_one() for _ in range(4)]
    assert {arm for _, _, arm in read} == {"aided", "unaided"}
    for public_id, case_id, arm in read:
        (arm_1,) = period_1[case_id]
        assert arm != arm_1
        earlier = revisable_answer(
            session=session, reader=reader, case_public_id=public_id, now=now
        )
        assert earlier is not None and earlier.arm == arm
        revise(public_id, arm, f"changed {arm} in period 2")
        assert rows(session, reader, case_id) == {
            **period_1[case_id],  # untouched
            arm: (f"changed {arm} in period 2", 1, 1),
        }
        with pytest.raises(AnswerError):
            revise(public_id, arm_1, "still too late")
        assert rows(session, reader, case_id)[arm_1] == period_1[case_id][arm_1]
    assert rows(session, reader, first_id)[first_arm] == ("changed in period 1", 1, 1)


def test_a_study_without_aid_revises_as_before(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, config=REVISABLE)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    public_id = session.exec(select(Case.public_id).where(Case.study_id == study.id)).one()
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=public_id,
        answer=validate_answer("Own", 2, False),
        shown_at=None,
        image_sha256=[],
    )
    earlier = revisable_answer(session=session, reader=reader, case_public_id=public_id)
    assert earlier is not None and earlier.arm == "unaided"
