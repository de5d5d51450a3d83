"""Reading time: the first-shown time survives a second showing; active time is checked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.report_submit import submit_report, validate_report
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.exam.timing import SLACK_MS, active_ms, mark_shown
from reader_app.models import CaseShown, Response
from tests.factories import make_reader, make_study

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_first_shown_is_written_once_and_copied_into_the_response(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    case = next_case(session=session, reader=reader)
    assert case is not None and reader.id is not None
    first = mark_shown(session=session, reader_id=reader.id, case_public_id=case.public_id, at=T0)
    # a reload six minutes later draws the case again: the first time stays
    later = T0 + timedelta(minutes=6)
    again = mark_shown(
        session=session, reader_id=reader.id, case_public_id=case.public_id, at=later
    )
    assert first == again == T0
    assert len(session.exec(select(CaseShown)).all()) == 1
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer("Pneumothorax", 2, False),
        shown_at=later,
        image_sha256=case.image_sha256,
        active_ms=123_456,
    )
    row = session.exec(select(Response)).one()
    assert (row.first_shown_at, row.shown_at, row.active_ms) == (T0, later, 123_456)


def test_a_report_is_stored_through_the_same_path_with_its_times(
    session: Session, settings: Settings
) -> None:
    """Reports go through exam.submit.store_response too: same first-shown time,
    active time and duplicate rule as a diagnosis."""
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    case = next_case(session=session, reader=reader)
    assert case is not None and reader.id is not None
    mark_shown(session=session, reader_id=reader.id, case_public_id=case.public_id, at=T0)
    report = validate_report("Free air under the right hemidiaphragm", "Perforation", 3, False)
    stored = [
        submit_report(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=report,
            shown_at=T0 + timedelta(minutes=1),
            image_sha256=case.image_sha256,
            active_ms=42_000,
        )
        for _ in range(2)  # a double click
    ]
    assert [r.duplicate for r in stored] == [False, True]
    row = session.exec(select(Response)).one()
    assert (row.findings, row.impression, row.likert, row.diagnosis, row.status) == (
        "Free air under the right hemidiaphragm",
        "Perforation",
        3,
        None,
        "answered",
    )
    assert (row.first_shown_at, row.active_ms) == (T0, 42_000)


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ("90000", 90_000),  # plausible: 1.5 min of a 2 min wall time
        ("0", 0),
        (str(120_000 + SLACK_MS), 120_000 + SLACK_MS),  # the edge of the slack
        # implausible or missing -> server estimate: since shown_at (60 s) minus 15 s paused
        (str(120_000 + SLACK_MS + 1), 45_000),
        ("-5", 45_000),
        ("abc", 45_000),
        ("", 45_000),
    ],
)
def test_active_ms_takes_the_browser_figure_only_when_it_fits(reported: str, expected: int) -> None:
    now = T0 + timedelta(minutes=2)
    got = active_ms(
        reported, first_shown_at=T0, shown_at=T0 + timedelta(minutes=1), paused_s=15, now=now
    )
    assert got == expected


def test_active_ms_knows_nothing_without_any_shown_time() -> None:
    assert active_ms("", first_shown_at=None, shown_at=None) is None
