"""The exam services on SQLite and PostgreSQL: order, next case, submit, resume."""

from __future__ import annotations

import pytest
from sqlmodel import Session, func, select

from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import draw_order, ensure_order
from reader_app.exam.submit import AnswerError, submit_answer, validate_answer
from reader_app.models import ReaderOrder, Response, utcnow
from tests.factories import make_reader, make_study


def _count_responses(session: Session) -> int:
    return int(session.exec(select(func.count()).select_from(Response)).one())


def test_draw_order_is_reproducible_and_keeps_practice_first() -> None:
    a = draw_order([10, 11], list(range(20)), seed=42)
    assert a == draw_order([10, 11], list(range(20)), seed=42)
    assert a[:2] == [10, 11]
    assert sorted(a[2:]) == list(range(20))
    assert a[2:] != draw_order([10, 11], list(range(20)), seed=43)[2:]


def test_answers_advance_and_resume_at_first_unanswered(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3)
    reader = make_reader(session, study).reader
    assert ensure_order(session=session, reader=reader) == 3
    shown = []
    for answer in (validate_answer("Pneumothorax", 3, False), validate_answer(None, None, True)):
        case = next_case(session=session, reader=reader)
        assert case is not None
        shown.append(case.public_id)
        res = submit_answer(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=answer,
            shown_at=utcnow(),
            image_sha256=case.image_sha256,
        )
        assert not res.duplicate
    # a "restart": a brand-new session sees the third case, number 3 of 3
    with Session(session.get_bind()) as fresh:
        third = next_case(session=fresh, reader=reader)
        assert third is not None and third.number == 3 and third.public_id not in shown
    stored = session.exec(select(Response).order_by(Response.id)).all()
    assert [(r.status, r.diagnosis, r.likert, r.idk) for r in stored] == [
        ("answered", "Pneumothorax", 3, False),
        ("idk", None, None, True),
    ]
    assert stored[0].image_sha256 and len(stored[0].image_sha256.split(",")[0]) == 64


def test_double_submit_stores_one_row(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    case = next_case(session=session, reader=reader)
    assert case is not None
    kwargs = dict(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        shown_at=utcnow(),
        image_sha256=case.image_sha256,
    )
    first = submit_answer(answer=validate_answer("Fracture", 2, False), **kwargs)  # type: ignore[arg-type]
    again = submit_answer(answer=validate_answer("Other", 4, False), **kwargs)  # type: ignore[arg-type]
    assert again.duplicate and again.response_id == first.response_id
    assert _count_responses(session) == 1
    assert session.get(Response, first.response_id).diagnosis == "Fracture"  # type: ignore[union-attr]


def test_order_is_created_once_even_when_asked_twice(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=5)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader, seed=1)
    ensure_order(session=session, reader=reader, seed=2)
    seeds = set(session.exec(select(ReaderOrder.seed).where(ReaderOrder.reader_id == reader.id)))
    assert seeds == {1}


def test_two_readers_get_different_orders(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=12)
    orders = []
    for code, seed in (("R01", 1), ("R02", 2)):
        reader = make_reader(session, study, code).reader
        ensure_order(session=session, reader=reader, seed=seed)
        orders.append(
            list(
                session.exec(
                    select(ReaderOrder.case_id)
                    .where(ReaderOrder.reader_id == reader.id)
                    .order_by(ReaderOrder.slot)
                )
            )
        )
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]


def test_case_outside_the_readers_exam_is_refused(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, slug="a")
    other = make_study(session, settings.asset_dir, n_cases=1, slug="b")
    reader = make_reader(session, study).reader
    other_reader = make_reader(session, other, "X").reader
    ensure_order(session=session, reader=other_reader)
    foreign = next_case(session=session, reader=other_reader)
    assert foreign is not None
    with pytest.raises(AuthError):
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=foreign.public_id,
            answer=validate_answer(None, None, True),
            shown_at=None,
            image_sha256=[],
        )
    assert _count_responses(session) == 0


@pytest.mark.parametrize(
    ("diagnosis", "likert", "message"),
    [
        ("", 3, "Enter a diagnosis"),
        ("   ", 3, "Enter a diagnosis"),
        ("Osteoma", None, "confidence"),
        ("Osteoma", 5, "0 to 4"),
        ("Osteoma", -1, "0 to 4"),
        ("x" * 301, 2, "300 characters"),
    ],
)
def test_validation_messages(diagnosis: str, likert: int | None, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        validate_answer(diagnosis, likert, False)


def test_idk_drops_diagnosis_and_likert_and_text_is_trimmed() -> None:
    assert validate_answer("ignored", 4, True).diagnosis is None
    assert validate_answer("  Osteoma ", 0, False).diagnosis == "Osteoma"


def test_a_revoked_reader_cannot_submit(session: Session, settings: Settings) -> None:
    from reader_app.core.auth import revoke_invite

    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    case = next_case(session=session, reader=reader)
    assert case is not None
    revoke_invite(session=session, reader=reader, actor="test")
    session.commit()
    with pytest.raises(AuthError, match="revoked"):
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=validate_answer(None, None, True),
            shown_at=None,
            image_sha256=[],
        )
    assert _count_responses(session) == 0
