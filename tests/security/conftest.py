"""Fixtures for the security tests: the real Chromium of tests/e2e, a served stand-in page."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, ServedApp, free_port, stop_app, wait_healthy

__all__ = ["serve_script"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes more than a few seconds (load runs, restarts, served apps)"
    )


def serve_script(script: Path, env: dict[str, str], log: Path) -> ServedApp:
    """``streamlit run`` one script from the project root (so .streamlit/config.toml applies)."""
    port = free_port()
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, proc, log)
    return ServedApp(url=url, port=port, env=env, proc=proc, log=log)


@pytest.fixture
def app_env(sqlite_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(READERSTUDY_DATABASE_URL=sqlite_url, READERSTUDY_DATA_DIR=str(tmp_path / "data"))
    yield env


__all__ += ["stop_app"]


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh Chromium context per test (the session-wide ``browser`` is tests/conftest.py's)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    context.close()
