"""Replicas that start together must not trip over each other's schema migration.

``readerstudy serve`` migrates before serving. Two replicas (or a replica and a
CLI command) started at the same moment against a database with a pending
migration run Alembic concurrently; without a lock, all but one fail with
"relation already exists" and that replica does not come up.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import PG_URL, pg_available

pytestmark = [pytest.mark.postgres]


@pytest.fixture
def empty_pg_url() -> Iterator[str]:
    if not pg_available():
        pytest.skip("PostgreSQL not configured (set READERSTUDY_TEST_POSTGRES_URL)")
    admin = make_url(PG_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"rs_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield (
        make_url(PG_URL)
        .set(drivername="postgresql+psycopg", database=name)
        .render_as_string(hide_password=False)
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_three_replicas_migrating_at_once_all_come_up(empty_pg_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    # each process imports everything first, then waits for the same starting signal
    code = (
        "import sys, time, pathlib; from reader_app.core.db import migrate\n"
        f"pathlib.Path({str(tmp_path)!r}, 'ready-' + sys.argv[1]).touch()\n"
        f"while not pathlib.Path({str(go)!r}).exists(): time.sleep(0.005)\n"
        f"migrate({empty_pg_url!r})"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(i)], stderr=subprocess.PIPE, text=True)
        for i in range(3)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    go.touch()
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    failed = [err.strip().splitlines()[-1:] for code_, err in results if code_ != 0]
    assert failed == [], f"replicas that could not migrate: {failed}"
