"""``readerstudy serve`` prewarms at start (reader_app/web/prewarm.py) unless
``READERSTUDY_PREWARM=off``: the real server, on a real SQLite study, logs the imports
and the study loaded and scored, before any browser asks for a page."""

from __future__ import annotations

import time
from pathlib import Path

from sqlmodel import Session

from reader_app.core.db import make_engine
from tests.conftest import fresh_sqlite_url
from tests.e2e.conftest import served_env, start_app, stop_app
from tests.factories import make_study
from tests.reader_app.analysis.scenario import grade_everything, plan_for, simulate_reader

CASES = ["case-000", "case-001", "case-002"]
SCORED = "reader_app.web.prewarm: prewarm: study prewarmed loaded and scored in"


def _served_log(url: str, data: Path, log: Path, prewarm: str, wait_for: str) -> str:
    env = served_env(url, data, READERSTUDY_LOG_LEVEL="INFO", READERSTUDY_PREWARM=prewarm)
    app = start_app(env, log)
    try:
        deadline = time.monotonic() + 60
        while wait_for not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        return log.read_text()
    finally:
        stop_app(app)


def test_the_server_prewarms_at_start_and_not_when_off(
    sqlite_template: Path, tmp_path: Path
) -> None:
    url = fresh_sqlite_url(sqlite_template, tmp_path)
    engine = make_engine(url)
    with Session(engine, expire_on_commit=False) as session:
        study = make_study(session, tmp_path / "data" / "assets", n_cases=3, slug="prewarmed")
        simulate_reader(session, study, "R01", plan_for(CASES, "CwI"))
        grade_everything(session, study)
    engine.dispose()

    on = _served_log(url, tmp_path / "data", tmp_path / "on.log", "on", SCORED)
    assert "reader_app.web.prewarm: prewarm: imported" in on, on
    assert SCORED in on, on

    off = _served_log(url, tmp_path / "data", tmp_path / "off.log", "off", "prewarm: off")
    assert "prewarm: off (READERSTUDY_PREWARM)" in off, off
    assert "prewarm: imported" not in off and SCORED not in off
