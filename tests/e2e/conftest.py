"""Real-browser fixtures: a served app on 127.0.0.1 and Debian's Chromium via Playwright.

Under CI=true a missing Chromium fails the run; locally the browser tests are
skipped with a visible reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from reader_app.core.settings import Settings
from tests.e2e.ws_trace import WsTrace
from tests.support.processes import die_with_parent, track

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServedApp:
    url: str
    port: int
    env: dict[str, str]
    proc: subprocess.Popen[bytes]
    log: Path


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"app exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.1)  # the health check is cheap; a server is up in seconds
    raise RuntimeError(f"app did not become healthy:\n{log.read_text()[-3000:]}")


def served_env(database_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment for a served app: this process's, without our settings or
    Streamlit's, on ``database_url`` and ``data_dir``, the prewarm off (plus ``extra``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMLIT_", "READERSTUDY_"))}
    env.update(READERSTUDY_DATABASE_URL=database_url, READERSTUDY_DATA_DIR=str(data_dir))
    # no start-up prewarm (reader_app/web/prewarm.py) unless a test asks for it: the suite
    # starts hundreds of servers, most never show a leaderboard
    env.update(READERSTUDY_PREWARM="off")
    env.update(extra)
    return env


def start_app(env: dict[str, str], log: Path, port: int | None = None) -> ServedApp:
    port = port or free_port()
    fh = log.open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "reader_app.cli", "serve", "--port", str(port)],
        env=env,
        stdout=fh,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        preexec_fn=die_with_parent,  # a killed test process takes its server along
    )
    track(proc, f"readerstudy serve --port {port} (log {log})")  # checked at session end
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, log)
    except BaseException:  # never leave a half-started server behind
        proc.kill()
        proc.wait()
        raise
    return ServedApp(url=url, port=port, env=env, proc=proc, log=log)


def stop_app(app: ServedApp) -> None:
    app.proc.terminate()
    try:
        app.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        app.proc.kill()


class OwnedApp:
    """A served app owned by the fixture that holds it: ``stop`` stops the process running
    now (after a ``restart`` too), and does nothing before a start or twice."""

    def __init__(self) -> None:
        self.app: ServedApp | None = None

    def start(self, env: dict[str, str], log: Path, port: int | None = None) -> ServedApp:
        self.app = start_app(env, log, port)
        return self.app

    def restart(self) -> ServedApp:
        """Stop the app and serve it again on the same address (a new process)."""
        old = self.app
        assert old is not None
        self.stop()
        return self.start(old.env, old.log, port=old.port)

    def stop(self) -> None:
        if self.app is not None:
            stop_app(self.app)
            self.app = None


@contextmanager
def owned_app() -> Iterator[OwnedApp]:
    """The one way a fixture serves the app: its stop is registered (this ``finally``)
    before ``owner.start(...)``, so a failure or a timeout later in set-up still stops it.

        with owned_app() as owner:
            app = owner.start(env, log)
            ...  # seed, open a browser: whatever fails here, the server stops
            yield app
    """
    owner = OwnedApp()
    try:
        yield owner
    finally:
        owner.stop()


@contextmanager
def launch_browser() -> Iterator[object]:
    """Debian's Chromium under Playwright; the one session-wide `browser` fixture uses this.

    Playwright's sync API runs once per process, so every test folder must share
    that single fixture (tests/conftest.py) instead of launching its own.
    """
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        if IN_CI:
            pytest.fail(f"CI=true but Chromium is missing at {CHROMIUM}", pytrace=False)
        pytest.skip(f"Chromium not installed at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def served(settings: object, tmp_path: Path) -> Iterator[ServedApp]:
    """The app served on a free port against this test's database (SQLite or PostgreSQL)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    with owned_app() as owner:
        yield owner.start(env, tmp_path / "app.log")


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg._rs_trace = WsTrace().attach(pg)  # printed when a wait for the next screen fails
    yield pg
    context.close()


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


@dataclass
class Server:
    """A served app on its own database (SQLite copy or PostgreSQL from the template)."""

    owner: OwnedApp
    settings: Settings
    engine: Engine

    @property
    def app(self) -> ServedApp:
        assert self.owner.app is not None
        return self.owner.app


@contextmanager
def served_on_database(
    request: pytest.FixtureRequest,
    sqlite_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
    label: str,
) -> Iterator[Server]:
    """Serve the app on a fresh database of ``request.param`` ("sqlite" or "postgres")."""
    import uuid

    import psycopg

    from reader_app.core.db import make_engine
    from reader_app.core.settings import load_settings
    from tests.conftest import _pg_admin_dsn, _pg_url_for, fresh_sqlite_url

    root = tmp_path_factory.mktemp(f"{label}_{request.param}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMLIT_", "READERSTUDY_"))}
    dbname = None
    if request.param == "sqlite":
        env["READERSTUDY_DATABASE_URL"] = fresh_sqlite_url(sqlite_template, root)
    else:
        template = request.getfixturevalue("pg_template")
        dbname = f"rs_t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(_pg_admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dbname}" TEMPLATE "{template}"')
        env["READERSTUDY_DATABASE_URL"] = _pg_url_for(dbname)
    env["READERSTUDY_DATA_DIR"] = str(root / "data")
    settings = load_settings(env)
    engine = make_engine(settings.database_url)
    try:
        with owned_app() as owner:  # stops the app running at the end (a restarted one too)
            owner.start(env, root / "app.log")
            yield Server(owner, settings, engine)
    finally:
        engine.dispose()
        if dbname:
            with psycopg.connect(_pg_admin_dsn(), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
