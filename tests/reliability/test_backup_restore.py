"""`readerstudy backup` and `readerstudy restore` on SQLite and PostgreSQL.

A restore brings back exactly the answers of the backup (hostile text byte for
byte), keeps the audit log append-only (its triggers travel with the backup),
refuses to overwrite data unless forced, and records itself in the audit log.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, select

from reader_app.cli import main as cli
from reader_app.core.backup import BackupError, backup_database, restore_database
from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import AuditEvent, Reader, Response
from tests.factories import make_reader, make_study

HOSTILE = ("<script>alert(1)</script> 🦴", "'); DROP TABLE responses; --", "ورم \u202eabc")


def _answer(session: Session, reader: Reader, diagnosis: str | None) -> None:
    case = next_case(session=session, reader=reader)
    assert case is not None
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer(diagnosis, None if diagnosis is None else 2, diagnosis is None),
        shown_at=None,
        image_sha256=case.image_sha256,
    )


def _answers(url: str) -> list[tuple[str | None, int | None, bool]]:
    engine = make_engine(url, pooled=False)
    with Session(engine) as s:
        rows = s.exec(select(Response).order_by(col(Response.id))).all()
        out = [(r.diagnosis, r.likert, r.idk) for r in rows]
    engine.dispose()
    return out


def _audit_actions(url: str) -> list[str]:
    engine = make_engine(url, pooled=False)
    with Session(engine) as s:
        out = list(s.exec(select(AuditEvent.action).order_by(col(AuditEvent.id))).all())
    engine.dispose()
    return out


def test_backup_and_restore_round_trip(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = settings.database_url
    study = make_study(session, settings.asset_dir, n_cases=5)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    for diagnosis in (*HOSTILE, None):
        _answer(session, reader, diagnosis)
    at_backup = _answers(url)
    session.close()

    dest = tmp_path / "nightly.backup"
    assert cli(["backup", str(dest)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == str(dest.resolve())  # the backup file is the last line
    assert "4 responses" in out[0]
    assert cli(["backup", str(dest)]) == 2  # never overwrites
    assert "already exists" in capsys.readouterr().err

    # the study goes on after the backup
    _answer(session, reader, "written after the backup")
    make_reader(session, study, code="R02")
    session.close()
    assert len(_answers(url)) == 5

    # a database holding data is not replaced without --force, and stays as it was
    assert cli(["restore", str(dest)]) == 2
    assert "--force" in capsys.readouterr().err
    assert len(_answers(url)) == 5

    assert cli(["restore", str(dest), "--force"]) == 0
    assert "Restored nightly.backup" in capsys.readouterr().out
    assert _answers(url) == at_backup  # exactly, hostile text included
    # the restore is recorded; the backup's own event came after its snapshot
    actions = _audit_actions(url)
    assert actions[-1] == "restore" and "backup" not in actions

    # the audit log is still append-only in the restored database
    engine = make_engine(url, pooled=False)
    with engine.connect() as conn:
        for statement in ("UPDATE audit_events SET actor = 'x'", "DELETE FROM audit_events"):
            with pytest.raises(DBAPIError, match="append-only"):
                conn.execute(text(statement))
            conn.rollback()
    engine.dispose()

    # and the exam resumes where the backup left it
    with Session(make_engine(url, pooled=False)) as fresh:
        again = fresh.exec(select(Reader).where(Reader.code == "R01")).one()
        case = next_case(session=fresh, reader=again)
        assert case is not None and case.number == 5
        assert fresh.exec(select(Reader).where(Reader.code == "R02")).first() is None


@pytest.fixture
def empty_url(settings: Settings, tmp_path: Path) -> Iterator[str]:
    """A second, empty (not even migrated) database of the same kind."""
    url = settings.database_url
    if url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    name = f"rs_t_{uuid.uuid4().hex[:12]}"
    admin = make_url(url).set(drivername="postgresql", database="postgres")
    dsn = admin.render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield make_url(url).set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_restore_into_an_empty_database_needs_no_force(
    session: Session, settings: Settings, tmp_path: Path, empty_url: str
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    _answer(session, reader, "Pneumothorax")
    session.close()
    result = backup_database(settings.database_url, tmp_path / "b")
    assert result.counts["responses"] == 1 and len(result.sha256) == 64

    counts = restore_database(empty_url, tmp_path / "b")
    assert counts["responses"] == 1 and counts["cases"] == 2
    assert _answers(empty_url) == [("Pneumothorax", 2, False)]


def test_restore_refuses_files_that_are_not_a_matching_backup(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"this is not a backup at all")
    with pytest.raises(BackupError, match="not a readerstudy backup"):
        restore_database(settings.database_url, junk, force=True)
    other = tmp_path / ("x.pgdump" if settings.is_sqlite else "x.sqlite3")
    if settings.is_sqlite:
        other.write_bytes(b"PGDMP" + b"\0" * 100)
    else:
        sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(BackupError, match="restore it into a database of the same kind"):
        restore_database(settings.database_url, other, force=True)
    assert cli(["restore", str(tmp_path / "missing.sqlite3")]) == 2
    assert "no backup file" in capsys.readouterr().err


def test_backup_tools_are_needed_only_for_postgresql(
    session: Session, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_study(session, settings.asset_dir, n_cases=1)
    session.close()
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools-here"))
    if settings.is_sqlite:
        assert backup_database(settings.database_url, tmp_path / "b").counts["cases"] == 1
    else:
        with pytest.raises(BackupError, match="pg_dump is not installed"):
            backup_database(settings.database_url, tmp_path / "b")
        assert not (tmp_path / "b").exists()
        assert list(tmp_path.glob(".backup-*")) == []  # no half-written leftovers


def test_sqlite_online_backup_is_consistent_while_answers_arrive(
    sqlite_url: str, tmp_path: Path
) -> None:
    engine = make_engine(sqlite_url)
    with Session(engine, expire_on_commit=False) as session:
        study = make_study(session, tmp_path / "assets", n_cases=60)
        reader = make_reader(session, study).reader
        ensure_order(session=session, reader=reader)
    stop = threading.Event()

    def answer_until_stopped() -> None:
        with Session(engine, expire_on_commit=False) as s:
            for i in range(60):
                if stop.is_set():
                    return
                _answer(s, reader, f"answer {i}")

    writer = threading.Thread(target=answer_until_stopped)
    writer.start()
    backups = []
    try:
        for i in range(5):
            backups.append(backup_database(sqlite_url, tmp_path / f"b{i}.sqlite3"))
    finally:
        stop.set()
        writer.join()
    engine.dispose()
    seen = [b.counts["responses"] for b in backups]
    assert seen == sorted(seen)
    for b in backups:
        con = sqlite3.connect(b.path)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert con.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # one file
        n = con.execute("SELECT count(*) FROM responses").fetchone()[0]
        con.close()
        # a snapshot: every stored answer is whole, and the count is at least what the
        # backup saw before it started copying
        assert n >= b.counts["responses"]
