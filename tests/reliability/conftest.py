"""Fixtures for the reliability tests: run scripts/loadtest.py, own a restartable PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import IN_CI
from tests.reliability.pgcluster import ThrowawayPostgres, find_bin_dir

ROOT = Path(__file__).resolve().parents[2]
LOADTEST = ROOT / "scripts" / "loadtest.py"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes more than a few seconds (load runs, restarts, served apps)"
    )


def run_loadtest(*args: str, timeout: float = 240) -> tuple[dict[str, Any], str]:
    """Run the load test; return its last-line JSON and its whole output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    proc = subprocess.run(
        [sys.executable, str(LOADTEST), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    output = proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines, f"loadtest printed nothing:\n{output[-3000:]}"
    summary: dict[str, Any] = json.loads(lines[-1])
    summary["_exit"] = proc.returncode
    return summary, output


@pytest.fixture(scope="session")
def throwaway_pg() -> Iterator[ThrowawayPostgres]:
    """A private PostgreSQL server this test session may stop, crash and restart."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        if IN_CI:
            pytest.fail("CI=true but no PostgreSQL server binaries (initdb) are installed")
        pytest.skip("PostgreSQL server binaries (initdb) not installed")
    pg = ThrowawayPostgres(bin_dir)
    try:
        pg.init()
        pg.start()
    except Exception as exc:
        pg.destroy()
        if IN_CI:
            raise
        pytest.skip(f"cannot run a private PostgreSQL server here: {exc}")
    yield pg
    pg.destroy()


@pytest.fixture
def throwaway_db(throwaway_pg: ThrowawayPostgres) -> str:
    """A fresh empty database on the private server."""
    return throwaway_pg.create_database(f"rs_r_{uuid.uuid4().hex[:10]}")
