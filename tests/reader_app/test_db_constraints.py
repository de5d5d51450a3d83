"""The schema itself refuses bad rows, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session

from reader_app.core.audit import record_event
from reader_app.core.settings import Settings
from reader_app.models import Case, Response
from tests.factories import make_reader, make_study


def _response(session: Session, settings: Settings, **overrides: object) -> Response:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    case = session.query(Case).first()
    assert case is not None
    values: dict[str, object] = dict(
        study_id=study.id,
        case_id=case.id,
        reader_id=reader.id,
        status="answered",
        diagnosis="x",
        likert=2,
    )
    values.update(overrides)
    return Response(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "overrides",
    [
        {"likert": 5},
        {"likert": -1},
        {"idk": True, "status": "idk", "likert": None},  # IDK with a diagnosis
        {"idk": True, "status": "idk", "diagnosis": None},  # IDK with a likert
        {"reader_id": None},  # no responder
        {"status": "maybe"},
    ],
)
def test_check_constraints_refuse_bad_responses(
    session: Session, settings: Settings, overrides: dict[str, object]
) -> None:
    session.add(_response(session, settings, **overrides))
    with pytest.raises(IntegrityError):
        session.commit()


def test_unique_reader_case(session: Session, settings: Settings) -> None:
    first = _response(session, settings)
    session.add(first)
    session.commit()
    session.add(Response(**first.model_dump(exclude={"id"})))
    with pytest.raises(IntegrityError):
        session.commit()


def test_audit_log_is_append_only(session: Session) -> None:
    record_event(session=session, actor="test", action="created")
    session.commit()
    for statement in ("UPDATE audit_events SET actor = 'x'", "DELETE FROM audit_events"):
        with pytest.raises(DBAPIError, match="append-only"):
            session.execute(text(statement))
        session.rollback()
    assert session.execute(text("SELECT count(*) FROM audit_events")).scalar_one() == 1


def test_sqlite_runs_in_wal_with_foreign_keys(sqlite_url: str) -> None:
    from reader_app.core.db import make_engine

    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar_one() == 10000
    engine.dispose()
