"""``readerstudy demo`` (issue 42): the sign-in link is the last thing a newcomer needs to
read, so the served app's log stays quiet after it; the demo reader is in a real group."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from sqlmodel import Session, select

from reader_app.commands.demo import DEMO_READER
from reader_app.core.db import make_engine
from reader_app.models import Reader
from tests.e2e.conftest import ROOT, free_port, served_env, wait_healthy


def test_the_demo_log_is_quiet_after_the_sign_in_link_and_its_reader_is_board_certified(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    url = f"sqlite:///{data / 'readerstudy.db'}"
    port = free_port()
    log = tmp_path / "demo.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reader_app.cli", "demo", "--port", str(port)],
            env=served_env(url, data),
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, log, timeout=120)
        time.sleep(1.0)  # anything Streamlit logs at start-up is written by now
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    lines = log.read_text().splitlines()
    link_at = next(i for i, line in enumerate(lines) if "?token=" in line)
    after = [line for line in lines[link_at + 1 :] if line.strip()]
    # before the fix: 15 lines of "'server.enableCORS=false' tells Streamlit not to limit
    # cross-origin access..." followed the link. Now at most our own "serving on" line and
    # Streamlit's short "You can now view..." banner (its URL lines) may follow.
    assert not any("CORS" in line or "cross-origin" in line for line in after), after
    assert not any("WARNING" in line.upper() for line in after), after
    assert len(after) <= 6, after

    engine = make_engine(url)
    try:
        with Session(engine) as session:
            reader = session.exec(select(Reader).where(Reader.code == DEMO_READER)).one()
            # the leaderboard labels a pool "Pool: <group>": "Pool: demo" meant nothing
            assert reader.group_name == "board-certified"
    finally:
        engine.dispose()
