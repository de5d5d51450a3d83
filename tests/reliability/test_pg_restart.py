"""A PostgreSQL crash-restart in the middle of a load run: the app reconnects, nothing lost.

The server is a private throwaway cluster (tests/reliability/pgcluster.py), so
the shared test server is never disturbed. ``pg_ctl stop -m immediate`` is a
crash (no checkpoint; WAL recovery on start), held down for a moment so that
in-flight and new requests really fail and must be retried.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psycopg
import pytest

from tests.reliability.conftest import LOADTEST, ROOT
from tests.reliability.pgcluster import ThrowawayPostgres

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.xdist_group("throwaway_pg")]


def _committed(dsn: str) -> int:
    try:
        with psycopg.connect(dsn, connect_timeout=2) as conn:
            row = conn.execute("SELECT count(*) FROM responses").fetchone()
            return int(row[0]) if row else 0
    except psycopg.Error:
        return 0  # not migrated yet


def test_postgres_crash_restart_mid_run_loses_and_doubles_nothing(
    throwaway_pg: ThrowawayPostgres, throwaway_db: str
) -> None:
    import json

    dbname = throwaway_db.rsplit("/", 1)[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    proc = subprocess.Popen(
        [sys.executable, str(LOADTEST), "--readers", "6", "--cases", "30", "--replicas", "2",
         "--think-ms", "20:80", "--time-limit", "150", "--retry-window", "60",
         "--database-url", throwaway_db],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while _committed(throwaway_pg.dsn(dbname)) < 40:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the load run never got going"
            time.sleep(0.1)
        before = _committed(throwaway_pg.dsn(dbname))
        throwaway_pg.restart("immediate", down_s=1.5)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.strip(), err[-3000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert before < 6 * 30, "the restart came after the run had finished"
    # requests failed while the server was down, and were retried
    assert summary["retries"] > 0, err[-3000:]
    assert summary["complete"] and summary["committed"] == 6 * 30, err[-3000:]
    assert summary["lost"] == 0
    assert summary["duplicated"] == 0
    assert summary["errors"] == 0 and proc.returncode == 0, err[-3000:]
