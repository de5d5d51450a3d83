"""The audit log is append-only: no code path updates or deletes it, and the database refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import delete, text, update
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, select

import reader_app.core.audit
from reader_app.core.audit import record_event
from reader_app.models import AuditEvent

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("reader_app", "scoring", "scripts", "benchmarks")
# SQL text or ORM calls that would change or remove audit rows
FORBIDDEN = [
    re.compile(r"\bUPDATE\s+\"?audit_events\b", re.IGNORECASE),
    re.compile(r"\bDELETE\s+FROM\s+\"?audit_events\b", re.IGNORECASE),
    re.compile(r"\bTRUNCATE\b[^;\n]*\baudit_events\b", re.IGNORECASE),
    re.compile(r"\bDROP\s+TABLE\b[^;\n]*\baudit_events\b", re.IGNORECASE),
    re.compile(r"\bDROP\s+TRIGGER\b[^;\n]*\baudit_events", re.IGNORECASE),
    re.compile(r"\b(update|delete)\(\s*AuditEvent\b"),
    re.compile(r"\.query\(\s*AuditEvent\s*\)[^\n]*\.(update|delete)\("),
]
# a migration's downgrade() may drop the guard triggers its upgrade() created
ALLOWED = {
    "reader_app/migrations/versions/0001_initial_schema.py": ("DROP TRIGGER", "drop_table"),
    "reader_app/migrations/versions/0005_audit_truncate.py": ("DROP TRIGGER",),
}
# the statements that create those guards name TRUNCATE/UPDATE/DELETE themselves
CREATE_TRIGGER = re.compile(r'"CREATE TRIGGER[^"]*"(?:\s*"[^"]*")*')


def _code_files() -> list[Path]:
    files: list[Path] = []
    for folder in CODE_DIRS:
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def test_no_code_path_updates_or_deletes_audit_events() -> None:
    offenders = []
    for path in _code_files():
        rel = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        if rel in ALLOWED:
            source = CREATE_TRIGGER.sub("", source[: source.find("def downgrade")])
        for pattern in FORBIDDEN:
            offenders += [f"{rel}: {m.group(0)!r}" for m in pattern.finditer(source)]
        # an AuditEvent loaded and then deleted through the session
        if "AuditEvent" in source and re.search(r"session\.delete\(\s*(event|audit)", source):
            offenders.append(f"{rel}: session.delete of an audit event")
    assert offenders == [], "code that would change the audit log:\n" + "\n".join(offenders)


def test_the_audit_module_offers_only_appending() -> None:
    public = [n for n in dir(reader_app.core.audit) if not n.startswith("_") and n.islower()]
    helpers = [n for n in public if callable(getattr(reader_app.core.audit, n))]
    assert helpers == ["record_event"]


def test_the_grep_finds_what_it_looks_for() -> None:
    # negative control: each forbidden shape is caught
    samples = [
        "session.execute(text('UPDATE audit_events SET actor = 1'))",
        'conn.execute("delete from audit_events where id = 3")',
        "TRUNCATE TABLE audit_events",
        "session.execute(delete(AuditEvent))",
        "session.query(AuditEvent).filter(x).delete()",
    ]
    for sample in samples:
        assert any(p.search(sample) for p in FORBIDDEN), sample
    assert not any(
        p.search("CREATE TRIGGER t BEFORE UPDATE OR DELETE ON audit_events") for p in FORBIDDEN
    )


def _one_event(session: Session) -> AuditEvent:
    event = record_event(session=session, actor="tester", action="created", note="first")
    session.commit()
    return event


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_events SET actor = 'mallory'",
        "UPDATE audit_events SET detail_json = '{}' WHERE id = 1",
        "DELETE FROM audit_events",
        "DELETE FROM audit_events WHERE actor = 'tester'",
    ],
)
def test_the_database_refuses_update_and_delete(session: Session, statement: str) -> None:
    _one_event(session)
    with pytest.raises(DBAPIError, match="append-only"):
        session.execute(text(statement))
    session.rollback()
    rows = session.exec(select(AuditEvent)).all()
    assert [(r.actor, r.action) for r in rows] == [("tester", "created")]


def test_the_database_refuses_orm_changes(session: Session) -> None:
    event = _one_event(session)
    event.actor = "mallory"
    session.add(event)
    with pytest.raises(DBAPIError, match="append-only"):
        session.commit()
    session.rollback()
    for stmt in (update(AuditEvent).values(actor="m"), delete(AuditEvent)):
        with pytest.raises(DBAPIError, match="append-only"):
            session.execute(stmt)
        session.rollback()
    session.delete(session.exec(select(AuditEvent)).one())
    with pytest.raises(DBAPIError, match="append-only"):
        session.commit()
    session.rollback()
    assert session.exec(select(AuditEvent.actor)).all() == ["tester"]


def test_appending_still_works(session: Session) -> None:
    _one_event(session)
    record_event(session=session, actor="tester", action="second")
    session.commit()
    assert session.exec(select(AuditEvent.action).order_by(AuditEvent.id)).all() == [  # type: ignore[arg-type]
        "created",
        "second",
    ]


@pytest.mark.postgres
def test_postgres_refuses_truncate(session: Session) -> None:
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    _one_event(session)
    with pytest.raises(DBAPIError, match="append-only"):
        session.execute(text("TRUNCATE audit_events"))
    session.rollback()
