"""Backup and restore of the study database, online, on SQLite and PostgreSQL.

- SQLite: the online backup API (``sqlite3.Connection.backup``) copies a
  consistent snapshot while readers keep answering (WAL readers never block
  writers); the copy is integrity-checked and written as one self-contained file.
- PostgreSQL: ``pg_dump --format=custom`` (a consistent snapshot too), checked with
  ``pg_restore --list``. Restore replays it with ``pg_restore | psql`` in a single
  transaction that first empties the ``public`` schema, so a failed restore
  changes nothing and tables from a newer schema cannot linger.

A backup is written to a temporary name and renamed, so a crash never leaves a
half-written file under the final name. A restore replaces everything, including
the audit log, so it refuses a database that holds data unless forced; afterwards
the schema is migrated and the restore itself is recorded in the audit log.
Assets (content-addressed PNGs, immutable) are files: copy the asset folder
alongside (docs/deploy.md).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url

from reader_app.core.audit import record_event
from reader_app.core.db import make_engine, migrate, session_scope
from reader_app.core.errors import ReaderStudyError

SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"
COUNTED_TABLES = ("studies", "cases", "readers", "responses", "verdicts", "audit_events")
PG_TIMEOUT_S = 3600

log = logging.getLogger(__name__)


class BackupError(ReaderStudyError, RuntimeError):
    """The backup or restore cannot be done; the message says why and what to do."""


@dataclass(frozen=True)
class BackupResult:
    path: Path
    backend: str
    size: int
    sha256: str
    counts: dict[str, int]


def backend_of(url: str) -> str:
    return make_url(url).get_backend_name()


def default_backup_path(data_dir: Path, url: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    suffix = "sqlite3" if backend_of(url) == "sqlite" else "pgdump"
    return data_dir / "backups" / f"readerstudy-{stamp}.{suffix}"


def table_counts(url: str) -> dict[str, int]:
    """Row counts of the main tables that exist (an empty database gives {})."""
    engine = make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            present = set(inspect(conn).get_table_names())
            return {
                t: int(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one())
                for t in COUNTED_TABLES
                if t in present
            }
    finally:
        engine.dispose()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise BackupError("an in-memory SQLite database cannot be backed up or restored")
    return Path(database)


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """A libpq URL without the password (kept out of `ps`), plus the environment for it."""
    parsed = make_url(url).set(drivername="postgresql")
    env = dict(os.environ)
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    # a restore must not wait forever behind a connected app's lock
    env["PGOPTIONS"] = (env.get("PGOPTIONS", "") + " -c lock_timeout=15s").strip()
    return parsed.set(password=None).render_as_string(hide_password=False), env


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(
            f"{name} is not installed; PostgreSQL backups need the client tools of the "
            "server's major version (Debian: apt-get install postgresql-client)"
        )
    return path


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=PG_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise BackupError(f"{what} did not finish within {PG_TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        raise BackupError(f"{what} failed: {proc.stderr.strip()[-1500:]}")


def backup_database(url: str, dest: Path) -> BackupResult:
    """Write a consistent online backup of the database at ``url`` to ``dest``."""
    if dest.exists():
        raise BackupError(f"{dest} already exists; choose another file name")
    dest.parent.mkdir(parents=True, exist_ok=True)
    counts = table_counts(url)
    log.info("backup of the %s database to %s started", backend_of(url), dest)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".backup-")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        if backend_of(url) == "sqlite":
            _sqlite_backup(_sqlite_path(url), tmp)
        else:
            _pg_backup(url, tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    result = BackupResult(dest, backend_of(url), dest.stat().st_size, _sha256(dest), counts)
    if "audit_events" in counts:
        _record(url, "backup", file=dest.name, sha256=result.sha256, counts=counts)
    log.info(
        "backup written: %s (%d bytes, sha256 %s, %s)", dest, result.size, result.sha256, counts
    )
    return result


def _sqlite_backup(source: Path, tmp: Path) -> None:
    if not source.exists():
        raise BackupError(f"no SQLite database at {source}")
    src = sqlite3.connect(source, timeout=30)
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst)  # one step: a consistent snapshot under a read transaction
        dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal
        check = dst.execute("PRAGMA integrity_check").fetchone()
        if not check or check[0] != "ok":
            raise BackupError(f"the backup copy failed its integrity check: {check}")
    finally:
        dst.close()
        src.close()


def _pg_backup(url: str, tmp: Path) -> None:
    target, env = _libpq(url)
    _run(
        [_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges",
         "--file", str(tmp), "--dbname", target],
        env,
        "pg_dump",
    )  # fmt: skip
    _run([_tool("pg_restore"), "--list", str(tmp)], env, "pg_restore --list (check)")


def backup_format(path: Path) -> str:
    """'sqlite' or 'postgresql', from the file's first bytes; BackupError otherwise."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise BackupError(f"cannot read {path}: {exc.strerror}") from exc
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(PGDUMP_MAGIC):
        return "postgresql"
    raise BackupError(f"{path} is not a readerstudy backup (neither SQLite nor pg_dump custom)")


def restore_database(url: str, source: Path, *, force: bool = False) -> dict[str, int]:
    """Replace the database at ``url`` with the backup ``source``; return the new counts."""
    kind = backup_format(source)
    backend = backend_of(url)
    if kind != backend:
        raise BackupError(
            f"{source.name} is a {kind} backup but the configured database is {backend}; "
            "restore it into a database of the same kind"
        )
    existing = {k: v for k, v in table_counts(url).items() if v and k != "audit_events"}
    if existing and not force:
        held = ", ".join(f"{v} {k}" for k, v in existing.items())
        raise BackupError(
            f"the database already holds data ({held}); a restore replaces all of it. "
            "Stop the app, take a backup, then run the restore again with --force"
        )
    log.warning("restore of %s into the %s database started (replacing %s)", source, kind, existing)
    if kind == "sqlite":
        _sqlite_restore(source, _sqlite_path(url))
    else:
        _pg_restore(url, source)
    migrate(url)  # an older backup is brought up to the current schema
    _record(url, "restore", file=source.name, sha256=_sha256(source), replaced=existing)
    counts = table_counts(url)
    log.info("restore of %s finished: %s", source, counts)
    return counts


def _sqlite_restore(source: Path, target: Path) -> None:
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        check = src.execute("PRAGMA integrity_check").fetchone()
        if not check or check[0] != "ok":
            raise BackupError(f"{source.name} failed its integrity check: {check}")
        target.parent.mkdir(parents=True, exist_ok=True)
        dst = sqlite3.connect(target, timeout=30)
        try:
            src.backup(dst)  # page copy under the target's write lock: all or nothing
        finally:
            dst.close()
    finally:
        src.close()


# Empties the public schema of everything a readerstudy schema can hold, so the
# replayed dump meets no leftovers; runs in the same transaction as the replay.
_PG_EMPTY_SCHEMA = """
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' LOOP
    EXECUTE format('DROP TABLE IF EXISTS public.%I CASCADE', r.tablename);
  END LOOP;
  FOR r IN SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' LOOP
    EXECUTE format('DROP SEQUENCE IF EXISTS public.%I CASCADE', r.sequencename);
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
           JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' LOOP
    EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', r.fn);
  END LOOP;
END $$;
"""


def _pg_restore(url: str, source: Path) -> None:
    target, env = _libpq(url)
    _run([_tool("pg_restore"), "--list", str(source)], env, "pg_restore --list (check)")
    with tempfile.TemporaryDirectory(prefix="rs-restore-") as tmp:
        prelude = Path(tmp) / "empty_schema.sql"
        prelude.write_text(_PG_EMPTY_SCHEMA)
        script = Path(tmp) / "restore.sql"
        _run(
            [_tool("pg_restore"), "--no-owner", "--no-privileges", "--file", str(script),
             str(source)],
            env,
            "pg_restore",
        )  # fmt: skip
        _run(
            [_tool("psql"), "-X", "--quiet", "--single-transaction", "-v", "ON_ERROR_STOP=1",
             "--dbname", target, "-f", str(prelude), "-f", str(script)],
            env,
            "psql (replaying the backup)",
        )  # fmt: skip


def _record(url: str, action: str, **detail: Any) -> None:
    engine = make_engine(url, pooled=False)
    try:
        with session_scope(engine) as session:
            record_event(session=session, actor="cli", action=action, **detail)
    finally:
        engine.dispose()
