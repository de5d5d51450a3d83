"""The exam page at case 200 costs what it costs at case 2 (docs/performance.md, Transitions).

Two readers of one 202-case study: one at the start, one who has 198 answers
stored (through the service, as the page stores them) and resumes at case 199.
After one answer each (which gives the page its lookup hint) both are measured
on a plain page run and on a transition (submit, then the next case): the same
statements, and on SQLite the same number of VM instructions, which grows with
every row a statement visits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import event
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from reader_app.core.db import get_engine
from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import utcnow
from tests.factories import make_reader, make_study
from tests.reader_app.ui.helpers import answer, progress_text

App = Callable[..., AppTest]


@dataclass
class Work:
    statements: list[str] = field(default_factory=list)
    steps: int = 0


@dataclass
class PageMeter:
    current: Work = field(default_factory=Work)

    def measure(self) -> Work:
        self.current = Work()
        return self.current

    def _step(self) -> int:
        self.current.steps += 1
        return 0

    def before(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.current.statements.append(statement)
        raw = conn.connection.dbapi_connection
        if hasattr(raw, "set_progress_handler"):  # sqlite3: count VM instructions
            raw.set_progress_handler(self._step, 1)


@pytest.fixture
def page_meter(settings: Settings) -> Iterator[PageMeter]:
    engine = get_engine(settings.database_url)  # the engine the app uses
    meter = PageMeter()
    event.listen(engine, "before_cursor_execute", meter.before)
    yield meter
    event.remove(engine, "before_cursor_execute", meter.before)


def _measure(meter: PageMeter, action: Callable[[], object]) -> Work:
    work = meter.measure()
    action()
    meter.measure()
    return work


def test_page_run_and_transition_cost_the_same_at_case_2_and_case_200(
    app_for: App, session: Session, settings: Settings, page_meter: PageMeter
) -> None:
    # 202 cases: every case measured here has a following one, as case 2 has
    study = make_study(session, settings.asset_dir, n_cases=202)
    early = make_reader(session, study, "R01", ready=True)
    late = make_reader(session, study, "R02", ready=True)
    ensure_order(session=session, reader=late.reader)
    for _ in range(198):
        case = next_case(session=session, reader=late.reader)
        assert case is not None
        submit_answer(
            session=session,
            reader=late.reader,
            case_public_id=case.public_id,
            answer=validate_answer(f"Seeded {case.slot}", 2, False),
            shown_at=utcnow(),
            image_sha256=case.reader_sha256,
        )

    first = app_for(early.token)
    answer(first, "First", 1)
    assert progress_text(first) == "Case 2 of 202"
    rerun_2 = _measure(page_meter, first.run)
    step_2 = _measure(page_meter, lambda: answer(first, "Second", 2))
    assert progress_text(first) == "Case 3 of 202"

    second = app_for(late.token)
    assert progress_text(second) == "Case 199 of 202"  # resumed: one walk of 198 slots
    answer(second, "Hundred ninety-ninth", 1)
    assert progress_text(second) == "Case 200 of 202"
    rerun_200 = _measure(page_meter, second.run)
    step_200 = _measure(page_meter, lambda: answer(second, "Two hundredth", 2))
    assert progress_text(second) == "Case 201 of 202"

    assert len(rerun_2.statements) == 4  # reader, study, next two cases, their images
    assert rerun_200.statements == rerun_2.statements
    assert step_200.statements == step_2.statements
    if session.get_bind().dialect.name == "sqlite":
        for at_2, at_200 in ((rerun_2, rerun_200), (step_2, step_200)):
            assert at_2.steps > 0
            assert abs(at_200.steps - at_2.steps) <= 0.02 * at_2.steps, (at_2.steps, at_200.steps)
