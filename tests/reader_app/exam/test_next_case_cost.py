"""Drawing case 200 costs what drawing case 1 costs (docs/performance.md, Transitions).

Counted two ways while the exam services run, on SQLite and PostgreSQL:

- the SQL statements the engine executes (count and text), on both backends;
- on SQLite, the virtual-machine instructions those statements take (a
  progress handler called after every instruction): the work done, which grows
  with every row a query visits, so a lookup that walked the answered slots
  would show it even with the same statement count.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session

from reader_app.core.settings import Settings
from reader_app.exam.next_case import CaseView, Upcoming, upcoming
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import Reader, utcnow
from tests.factories import make_reader, make_study

N_CASES = 201  # so that case 200, like case 1, has a following case


@dataclass
class Work:
    statements: list[str] = field(default_factory=list)
    steps: int = 0  # SQLite VM instructions (0 on PostgreSQL)


@dataclass
class Meter:
    engine: Engine
    current: Work = field(default_factory=Work)

    def measure(self) -> Work:
        self.current = Work()
        return self.current

    def _count_step(self) -> int:
        self.current.steps += 1
        return 0  # 0: carry on

    def before(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.current.statements.append(statement)
        raw = conn.connection.dbapi_connection
        if hasattr(raw, "set_progress_handler"):  # sqlite3
            raw.set_progress_handler(self._count_step, 1)


@pytest.fixture
def meter(engine: Engine) -> Iterator[Meter]:
    m = Meter(engine)
    event.listen(engine, "before_cursor_execute", m.before)
    yield m
    event.remove(engine, "before_cursor_execute", m.before)


def _answer(session: Session, reader: Reader, case: CaseView) -> None:
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer(f"Answer {case.slot}", case.slot % 5, False),
        shown_at=utcnow(),
        image_sha256=case.reader_sha256,
    )


def _draw(meter: Meter, reader: Reader, from_slot: int) -> tuple[Upcoming, Work]:
    """What a page run does: a new session, the next two cases from the hint."""
    with Session(meter.engine) as session:
        work = meter.measure()
        ahead = upcoming(session=session, reader=reader, total=N_CASES, from_slot=from_slot)
    meter.measure()  # what follows is not counted here
    return ahead, work


SEED = 7  # one fixed order, so the measured work never depends on a random draw


def test_case_200_costs_what_case_1_costs(
    session: Session, settings: Settings, meter: Meter
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=N_CASES, strip_every=50)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader, seed=SEED)

    first, at_case_1 = _draw(meter, reader, from_slot=0)
    assert first.case is not None and first.case.number == 1
    assert first.following is not None and first.following.number == 2
    case = first.case
    for _ in range(199):  # answer cases 1..199 the way the page does
        _answer(session, reader, case)
        ahead, at_case_200 = _draw(meter, reader, from_slot=case.slot + 1)
        assert ahead.case is not None and ahead.case.slot == case.slot + 1
        case = ahead.case
    assert case.number == 200

    # the same statements: the next two slots, then their images
    assert len(at_case_1.statements) == 2
    assert at_case_1.statements == at_case_200.statements
    if session.get_bind().dialect.name == "sqlite":
        # and the same work: 199 stored answers add no instruction
        assert at_case_1.steps > 0
        assert abs(at_case_200.steps - at_case_1.steps) <= 0.02 * at_case_1.steps, (
            at_case_1.steps,
            at_case_200.steps,
        )
        # the measure is sensitive: without the hint the lookup walks 199 answered slots
        _, resume = _draw(meter, reader, from_slot=0)
        assert resume.steps > 3 * at_case_200.steps, (resume.steps, at_case_200.steps)


def test_a_hint_past_an_unanswered_slot_never_finishes_the_exam(
    session: Session, settings: Settings
) -> None:
    """The hint is only a starting point: an empty result is checked again from slot 0."""
    study = make_study(session, settings.asset_dir, n_cases=3)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    first = upcoming(session=session, reader=reader).case
    assert first is not None
    ahead = upcoming(session=session, reader=reader, from_slot=1)
    assert ahead.case is not None and ahead.case.slot == 1  # slot 0 skipped by the hint
    assert ahead.following is not None and ahead.following.slot == 2
    beyond = upcoming(session=session, reader=reader, from_slot=3)
    assert beyond.case is not None and beyond.case.slot == 0  # nothing left after 3: recheck
    assert beyond.following is not None and beyond.following.slot == 1
