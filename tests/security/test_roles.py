"""Role checks live in the service layer: a reader cannot read another reader's answers or
any ground truth, and staff roles cannot answer as readers, whatever the UI shows."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from sqlmodel import Session, func, select

from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.exam.next_case import CaseView, ImageView, next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.grading.adjudication import adjudicator_agreement, change_verdict, decide
from reader_app.grading.key_admin import key_history, list_key
from reader_app.grading.queue import adjudication_queue
from reader_app.grading.rubric import record_rubric_grade, rubric_queue
from reader_app.grading.run_judges import run_judges
from reader_app.models import AnswerKey, Case, Reader, Response
from tests.factories import make_reader, make_study

# What a reader's case view may carry. Adding a field here is a security decision.
CASE_VIEW_FIELDS = {"public_id", "kind", "practice", "history", "slot", "total", "images"}
# pixel_mm: the stored PNG's spacing (the distance tool); values_sha256: the content address
# of the same pixels' original values (study option original_values), a metadata-free PNG
IMAGE_VIEW_FIELDS = {
    "sha256", "label", "window", "role", "width", "height", "pixel_mm", "values_sha256"
}  # fmt: skip


def _answer_all(session: Session, reader: Reader, text: str) -> list[CaseView]:
    ensure_order(session=session, reader=reader)
    seen = []
    while (case := next_case(session=session, reader=reader)) is not None:
        seen.append(case)
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=validate_answer(f"{text} {case.slot}", 3, False),
            shown_at=None,
            image_sha256=case.image_sha256,
        )
    return seen


def _responses(session: Session) -> int:
    return int(session.exec(select(func.count()).select_from(Response)).one())


@pytest.mark.parametrize("role", ["coordinator", "adjudicator", "analyst"])
def test_staff_roles_cannot_answer_as_readers(
    session: Session, settings: Settings, role: str
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    staff = make_reader(session, study, code=f"S-{role}", role=role).reader
    ensure_order(session=session, reader=staff)
    case = next_case(session=session, reader=staff)
    assert case is not None
    with pytest.raises(AuthError, match="reader role"):
        submit_answer(
            session=session,
            reader=staff,
            case_public_id=case.public_id,
            answer=validate_answer("x", 1, False),
            shown_at=None,
            image_sha256=[],
        )
    assert _responses(session) == 0


def test_a_reader_cannot_answer_cases_outside_their_exam(
    session: Session, settings: Settings
) -> None:
    mine = make_study(session, settings.asset_dir, n_cases=2, slug="mine")
    other = make_study(session, settings.asset_dir, n_cases=2, slug="other")
    reader = make_reader(session, mine).reader
    ensure_order(session=session, reader=reader)
    foreign = session.exec(select(Case).where(Case.study_id == other.id)).first()
    assert foreign is not None
    for public_id in (foreign.public_id, "c" + "0" * 20, "' OR 1=1 --", ""):
        with pytest.raises(AuthError, match="not part of your exam"):
            submit_answer(
                session=session,
                reader=reader,
                case_public_id=public_id,
                answer=validate_answer("x", 1, False),
                shown_at=None,
                image_sha256=[],
            )
    assert _responses(session) == 0


def test_case_views_carry_no_ground_truth_and_no_source(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4, n_practice=1, strip_every=2)
    reader = make_reader(session, study).reader
    views = _answer_all(session, reader, "answer")
    assert len(views) == 5
    assert {f.name for f in dataclasses.fields(CaseView)} == CASE_VIEW_FIELDS
    assert {f.name for f in dataclasses.fields(ImageView)} == IMAGE_VIEW_FIELDS
    secrets = []
    for key, case in session.exec(select(AnswerKey, Case).join(Case)).all():
        secrets += [key.diagnosis, case.source_id, *filter(None, key.synonyms.split("|"))]
    rendered = repr(views)
    for secret in secrets:
        assert secret not in rendered, f"{secret!r} reaches a reader's case view"


def test_one_readers_answers_do_not_reach_another_reader(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3)
    alice = make_reader(session, study, code="alice").reader
    bob = make_reader(session, study, code="bob").reader
    _answer_all(session, alice, "ALICE-SECRET")
    ensure_order(session=session, reader=bob)
    first = next_case(session=session, reader=bob)
    assert first is not None and first.number == 1  # alice's progress is not bob's
    views = _answer_all(session, bob, "bob")
    assert len(views) == 3 and "ALICE-SECRET" not in repr(views)


def _staff_services() -> list[tuple[str, Callable[[Session, Reader], Any]]]:
    return [
        ("list_key", lambda s, r: list_key(session=s, actor=r)),
        ("key_history", lambda s, r: key_history(session=s, actor=r, case_id=1)),
        ("adjudication_queue", lambda s, r: adjudication_queue(session=s, adjudicator=r)),
        ("decide", lambda s, r: decide(session=s, adjudicator=r, item_id="x", correct=True)),
        ("rubric_queue", lambda s, r: rubric_queue(session=s, adjudicator=r)),
        (
            "record_rubric_grade",
            lambda s, r: record_rubric_grade(session=s, adjudicator=r, item_id="x", score=40),
        ),
        ("adjudicator_agreement", lambda s, r: adjudicator_agreement(session=s, actor=r)),
        ("run_judges", lambda s, r: run_judges(session=s, actor=r, judges=())),
        (
            "change_verdict",
            lambda s, r: change_verdict(session=s, actor=r, case_id=1, answer="x", correct=True),
        ),
    ]


def test_readers_are_refused_by_every_grading_service(session: Session, settings: Settings) -> None:
    """The answer key, the graded answers of others and the verdicts are staff-only."""
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study).reader
    _answer_all(session, reader, "answer")
    for name, call in _staff_services():
        with pytest.raises(AuthError):
            call(session, reader)
            pytest.fail(f"{name} served a reader")
        session.rollback()
