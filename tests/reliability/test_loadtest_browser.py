"""The real-browser load test: Chromium contexts on two served replicas, through a kill -9
of one replica and through a PostgreSQL crash-restart; nothing acknowledged is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.e2e.conftest import CHROMIUM
from tests.reliability.conftest import ROOT
from tests.reliability.pgcluster import ThrowawayPostgres

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SCRIPT = ROOT / "scripts" / "loadtest_browser.py"


def _require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"CI=true but Chromium is missing at {CHROMIUM}")
        pytest.skip(f"Chromium not installed at {CHROMIUM}")


def _launch(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )


def _summary(proc: subprocess.Popen[str], timeout: float = 400) -> tuple[dict[str, object], str]:
    out, err = proc.communicate(timeout=timeout)
    assert out.strip(), err[-3000:]
    return json.loads(out.strip().splitlines()[-1]), err


def test_two_replicas_and_a_kill9_in_chromium(tmp_path: Path) -> None:
    _require_chromium()
    proc = _launch("--readers", "3", "--cases", "6", "--replicas", "2", "--kill-at", "0.4",
                   "--ack-timeout", "8", "--think-ms", "50:200", "--time-limit", "240")  # fmt: skip
    summary, err = _summary(proc)
    assert summary["kills"] == 1, err[-3000:]
    assert summary["switch_replica"] is True
    assert summary["complete"] and summary["committed"] == 18, (
        json.dumps(summary, indent=1) + "\n" + err[-3000:]
    )
    assert summary["lost"] == 0 and summary["duplicated"] == 0, json.dumps(summary)
    assert summary["errors"] == 0 and proc.returncode == 0, summary


@pytest.mark.postgres
@pytest.mark.xdist_group("throwaway_pg")
def test_served_app_reconnects_after_a_postgres_crash_restart(
    throwaway_pg: ThrowawayPostgres, throwaway_db: str
) -> None:
    _require_chromium()
    dsn = throwaway_pg.dsn(throwaway_db.rsplit("/", 1)[1])
    proc = _launch("--readers", "2", "--cases", "6", "--replicas", "1", "--think-ms", "200:500",
                   "--ack-timeout", "6", "--time-limit", "240",
                   "--database-url", throwaway_db)  # fmt: skip
    try:
        deadline = time.monotonic() + 150
        while True:
            try:
                with psycopg.connect(dsn, connect_timeout=2) as conn:
                    row = conn.execute("SELECT count(*) FROM responses").fetchone()
                    if row and row[0] >= 3:
                        break
            except psycopg.Error:
                pass
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the browser run never got going"
            time.sleep(0.3)
        throwaway_pg.restart("immediate", down_s=2.0)
        summary, err = _summary(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert summary["complete"] and summary["committed"] == 12, (json.dumps(summary), err[-3000:])
    assert summary["lost"] == 0 and summary["duplicated"] == 0, json.dumps(summary)
    assert summary["errors"] == 0 and proc.returncode == 0, summary
