"""Order from a stored seed, practice feedback and revisions, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlmodel import Session, col, func, select

from reader_app.core.settings import Settings
from reader_app.exam.next_case import case_at_slot, next_case
from reader_app.exam.order import (
    draw_order,
    ensure_order,
    order_summary,
    reproduce_order,
    stored_order,
)
from reader_app.exam.practice import practice_feedback
from reader_app.exam.revisions import (
    answer_history,
    revisable_slots,
    revise_answer,
    stored_answer,
)
from reader_app.exam.submit import AnswerError, submit_answer, validate_answer
from reader_app.models import Case, Reader, Response, ResponseRevision, Study, utcnow
from reader_app.study.config import study_settings
from tests.factories import make_reader, make_study


def _answer(session: Session, reader: Reader, diagnosis: str | None, likert: int | None) -> str:
    case = next_case(session=session, reader=reader)
    assert case is not None
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer(diagnosis, likert, diagnosis is None),
        shown_at=utcnow(),
        image_sha256=case.reader_sha256,
    )
    return case.public_id


def test_order_is_reproducible_from_the_stored_seed(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=10, n_practice=2)
    reader = make_reader(session, study).reader
    assert ensure_order(session=session, reader=reader) == 12
    summary = order_summary(session=session, reader=reader)
    assert (summary.total, summary.practice, summary.scored) == (12, 2, 10)
    assert summary.seed is not None
    assert reproduce_order(session=session, reader=reader) == stored_order(
        session=session, reader=reader
    )


def test_practice_count_limits_practice_cases(session: Session, settings: Settings) -> None:
    study = make_study(
        session, settings.asset_dir, n_cases=3, n_practice=3, config={"practice_count": 1}
    )
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    summary = order_summary(session=session, reader=reader)
    assert (summary.total, summary.practice) == (4, 1)
    first = session.get(Case, stored_order(session=session, reader=reader)[0])
    assert first is not None and first.practice and first.position == 0


def test_empty_study_stores_no_order(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=0)
    reader = make_reader(session, study).reader
    assert ensure_order(session=session, reader=reader) == 0
    assert order_summary(session=session, reader=reader).seed is None
    assert next_case(session=session, reader=reader) is None


def test_practice_feedback_only_after_the_answer_and_only_for_practice(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, n_practice=1)
    reader = make_reader(session, study).reader
    other = make_reader(session, study, "R02").reader
    for r in (reader, other):
        ensure_order(session=session, reader=r)
    practice = next_case(session=session, reader=reader)
    assert practice is not None and practice.practice
    # not answered yet: no key
    pid = practice.public_id
    assert practice_feedback(session=session, reader=reader, case_public_id=pid) is None
    _answer(session, reader, "Osteoma", 2)
    feedback = practice_feedback(session=session, reader=reader, case_public_id=pid)
    assert feedback is not None
    assert (feedback.reference, feedback.also_accepted) == ("Diagnosis number 0", ("dx0",))
    assert (feedback.your_diagnosis, feedback.your_likert, feedback.idk) == ("Osteoma", 2, False)
    # another reader who has not answered it gets nothing
    assert practice_feedback(session=session, reader=other, case_public_id=pid) is None
    # a scored case never yields its key, answered or not
    scored = _answer(session, reader, "Osteoma", 2)
    assert practice_feedback(session=session, reader=reader, case_public_id=scored) is None
    stored = session.exec(select(Response.practice).order_by(col(Response.id))).all()
    assert stored == [True, False]


def _revisable_study(session: Session, settings: Settings, allow: bool = True) -> Study:
    return make_study(
        session, settings.asset_dir, n_cases=3, n_practice=1, config={"allow_revisions": allow}
    )


def test_revision_keeps_every_earlier_answer_with_its_time(
    session: Session, settings: Settings
) -> None:
    study = _revisable_study(session, settings)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    _answer(session, reader, "Practice answer", 1)
    public_id = _answer(session, reader, "Pneumonia", 2)
    assert revisable_slots(session=session, reader=reader) == [1]  # practice is final
    config = study_settings(study)
    first = stored_answer(session=session, reader=reader, case_public_id=public_id)
    assert first is not None and first.revision == 0
    second = revise_answer(
        session=session,
        reader=reader,
        config=config,
        case_public_id=public_id,
        answer=validate_answer("Pneumothorax", 4, False),
        seen_revision=0,
    )
    third = revise_answer(
        session=session,
        reader=reader,
        config=config,
        case_public_id=public_id,
        answer=validate_answer(None, None, True),
        seen_revision=1,
    )
    assert (third.revision, third.diagnosis, third.idk) == (2, None, True)
    history = answer_history(session=session, response_id=third.response_id)
    assert [(h.diagnosis, h.likert, h.status) for h in history] == [
        ("Pneumonia", 2, "answered"),
        ("Pneumothorax", 4, "answered"),
    ]
    assert history[0].submitted_at == first.submitted_at
    assert history[1].submitted_at == second.submitted_at
    assert history[0].replaced_at <= history[1].replaced_at
    # still one response row per (reader, case)
    assert session.exec(select(func.count()).select_from(Response)).one() == 2


def test_a_revision_stores_its_own_active_time_and_viewer_record_beside_the_first(
    session: Session, settings: Settings
) -> None:
    """Issue 38: the revised response holds the revision's own visible time and viewer
    record; the first answer's stay with it in the history (not lost, not carried over)."""
    study = _revisable_study(session, settings)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    _answer(session, reader, "Practice answer", 1)
    case = next_case(session=session, reader=reader)
    assert case is not None
    first_record = {"case": case.public_id, "thumbnail_clicks": 3, "zoom_used": True}
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer("Pneumonia", 2, False),
        shown_at=utcnow(),
        image_sha256=case.reader_sha256,
        interaction=first_record,
        active_ms=41_000,
    )
    config = study_settings(study)
    revision_record = {"case": case.public_id, "thumbnail_clicks": 0, "zoom_used": False}
    revised = revise_answer(
        session=session,
        reader=reader,
        config=config,
        case_public_id=case.public_id,
        answer=validate_answer("Pneumothorax", 4, False),
        seen_revision=0,
        active_ms=7_500,
        interaction=revision_record,
    )
    session.expire_all()
    response = session.get(Response, revised.response_id)
    assert response is not None and response.diagnosis == "Pneumothorax"
    assert response.active_ms == 7_500  # the revision's, not 41 000 (the first's)
    assert json.loads(response.interaction_json or "null") == revision_record
    [history] = answer_history(session=session, response_id=revised.response_id)
    assert (history.diagnosis, history.active_ms) == ("Pneumonia", 41_000)
    assert json.loads(history.interaction_json or "null") == first_record
    # a revision whose figures are unknown stores none, never the answer's before it
    again = revise_answer(
        session=session,
        reader=reader,
        config=config,
        case_public_id=case.public_id,
        answer=validate_answer("Pneumothorax", 3, False),
        seen_revision=1,
    )
    session.expire_all()
    response = session.get(Response, again.response_id)
    assert response is not None and (response.active_ms, response.interaction_json) == (None, None)
    second = answer_history(session=session, response_id=again.response_id)[1]
    assert second.active_ms == 7_500
    assert json.loads(second.interaction_json or "null") == revision_record


def test_unchanged_revision_adds_no_history(session: Session, settings: Settings) -> None:
    study = _revisable_study(session, settings)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    _answer(session, reader, "Practice", 1)
    public_id = _answer(session, reader, "Pneumonia", 2)
    same = revise_answer(
        session=session,
        reader=reader,
        config=study_settings(study),
        case_public_id=public_id,
        answer=validate_answer(" Pneumonia ", 2, False),
        seen_revision=0,
    )
    assert same.revision == 0
    assert session.exec(select(func.count()).select_from(ResponseRevision)).one() == 0


def test_revision_refusals(session: Session, settings: Settings) -> None:
    """Not allowed, practice, stale revision, closed study, unanswered case: all refused."""
    allowed = _revisable_study(session, settings)
    reader = make_reader(session, allowed).reader
    ensure_order(session=session, reader=reader)
    practice_id = _answer(session, reader, "Practice", 1)
    scored_id = _answer(session, reader, "Pneumonia", 2)
    unanswered = case_at_slot(session=session, reader=reader, slot=2, total=4)
    assert unanswered is not None
    config = study_settings(allowed)
    forbidding = study_settings(
        Study(slug="x", title="x", config_json='{"allow_revisions": false}')
    )
    attempts = [
        (forbidding, scored_id, 0, "does not allow"),
        (config, practice_id, 0, "final"),
        (config, scored_id, 5, "another window"),
        (config, unanswered.public_id, 0, "no answer"),
    ]
    for cfg, target, seen, message in attempts:
        with pytest.raises(AnswerError, match=message):
            revise_answer(
                session=session,
                reader=reader,
                config=cfg,
                case_public_id=target,
                answer=validate_answer("Changed", 3, False),
                seen_revision=seen,
            )
    allowed.state = "closed"
    session.add(allowed)
    session.commit()
    with pytest.raises(AnswerError, match="closed"):
        revise_answer(
            session=session,
            reader=reader,
            config=config,
            case_public_id=scored_id,
            answer=validate_answer("Changed", 3, False),
            seen_revision=0,
        )
    assert session.exec(select(func.count()).select_from(ResponseRevision)).one() == 0


def test_two_windows_revising_at_once_cannot_both_win(session: Session, settings: Settings) -> None:
    study = _revisable_study(session, settings)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    _answer(session, reader, "Practice", 1)
    public_id = _answer(session, reader, "Pneumonia", 2)
    config = study_settings(study)
    engine = session.get_bind()
    with Session(engine, expire_on_commit=False) as tab_a, Session(engine) as tab_b:
        r_a, r_b = tab_a.get(Reader, reader.id), tab_b.get(Reader, reader.id)
        assert r_a is not None and r_b is not None
        revise_answer(
            session=tab_a,
            reader=r_a,
            config=config,
            case_public_id=public_id,
            answer=validate_answer("From tab A", 3, False),
            seen_revision=0,
        )
        with pytest.raises(AnswerError, match="another window"):
            revise_answer(
                session=tab_b,
                reader=r_b,
                config=config,
                case_public_id=public_id,
                answer=validate_answer("From tab B", 3, False),
                seen_revision=0,
            )
    session.expire_all()
    final = stored_answer(session=session, reader=reader, case_public_id=public_id)
    assert final is not None and (final.diagnosis, final.revision) == ("From tab A", 1)
    assert session.exec(select(func.count()).select_from(ResponseRevision)).one() == 1


def test_locked_study_refuses_answers(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    study.state = "locked"
    session.add(study)
    session.commit()
    with pytest.raises(AnswerError, match="paused by its coordinator"):
        _answer(session, reader, "Anything", 1)


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 12), twins=st.integers(1, 3))
@hypothesis_settings(max_examples=60, deadline=None)
def test_cases_sharing_a_picture_never_follow_each_other(seed: int, n: int, twins: int) -> None:
    """Cases 1..twins each have a twin (100 + k) showing the same picture; with at least
    as many other cases as pairs, no order puts a case right after its twin."""
    twins = min(twins, n // 2)
    scored = list(range(1, n + 1)) + [100 + k for k in range(1, twins + 1)]
    images = {cid: frozenset({f"img{cid % 100}"}) for cid in scored}
    order = draw_order([0], scored, seed, images)
    assert sorted(order) == sorted([0, *scored])  # a permutation: nothing lost or doubled
    assert order[0] == 0  # practice stays first
    assert order == draw_order([0], scored, seed, images)  # reproducible from the seed
    for before, after in pairwise(order[1:]):
        assert not images[before] & images[after], order


def test_without_pictures_the_order_is_the_plain_shuffle() -> None:
    assert draw_order([9], [1, 2, 3, 4], 5) == draw_order([9], [1, 2, 3, 4], 5, {})


def test_a_revision_goes_through_the_exam_state_lock_like_a_new_answer() -> None:
    """commit_revision takes the lock the exam door's commit holds (exam.commit._locked):
    while another thread holds it, the revision waits; then it is counted and refused."""
    import threading

    from reader_app.exam.commit import commit_revision
    from reader_app.exam.state import ExamState

    def no_database() -> Session:
        raise AssertionError("a value that is not the panel's never reaches the database")

    state = ExamState()
    done = threading.Event()

    def revise() -> None:
        commit_revision(state, {"bad": 1}, reader_id=1, token_hash=None, sessions=no_database)
        done.set()

    with state.lock:
        worker = threading.Thread(target=revise)
        worker.start()
        assert not done.wait(0.3)  # held here: the revision waits for it
        assert state.attempt == 0 and state.form_error is None
    worker.join(timeout=10)
    assert done.is_set()
    assert state.attempt == 1 and state.form_error  # counted, and the refusal on the form
