"""Streamlit's own protections stay on: XSRF, CORS, no tracebacks for readers, loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlmodel import Session

from reader_app.commands.serve import streamlit_argv
from reader_app.core.db import make_engine
from reader_app.core.settings import load_settings
from tests.e2e.conftest import free_port, start_app, stop_app, wait_healthy
from tests.factories import make_reader, make_study
from tests.security.bare_client import XSRF_COOKIE, http_request, live_visit, page_cookies

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"


def _config() -> dict[str, dict[str, object]]:
    return tomllib.loads(CONFIG.read_text())


def test_xsrf_protection_is_on_and_cors_protection_on() -> None:
    # issue 42: CORS protection off protected nothing and printed a 15-line warning
    server = _config()["server"]
    assert server["enableXsrfProtection"] is True
    assert server["enableCORS"] is True


def test_readers_see_no_tracebacks_or_developer_tools() -> None:
    config = _config()
    assert config["client"]["showErrorDetails"] in ("none", False)
    assert config["client"]["toolbarMode"] == "viewer"
    assert config["browser"]["gatherUsageStats"] is False


def test_default_bind_is_loopback_and_no_secret_is_configured_here() -> None:
    config = _config()
    assert config["server"]["address"] == "127.0.0.1"
    # the cookie secret belongs in secrets.toml or the environment, never in git
    assert "cookieSecret" not in config["server"]
    assert "[auth" not in CONFIG.read_text()


def test_serve_passes_the_protections_itself() -> None:
    """Streamlit reads .streamlit/config.toml only from the current folder: serve passes
    the same safe values on the command line, so they hold wherever it is started."""
    argv = streamlit_argv(8501, "127.0.0.1")
    flags = {argv[i][2:]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    config = _config()
    assert flags["server.enableXsrfProtection"] == "true"
    assert flags["client.showErrorDetails"] == str(config["client"]["showErrorDetails"])
    assert flags["client.toolbarMode"] == config["client"]["toolbarMode"] == "viewer"
    assert flags["browser.gatherUsageStats"] == "false"
    assert "cookieSecret" not in " ".join(argv)


def test_serve_flags_and_config_toml_say_the_same() -> None:
    """Every setting in .streamlit/config.toml is passed by serve with the same value
    (the address and port are serve's own options), so the app looks and behaves
    the same wherever it is started: the dark reading-room theme included."""
    argv = streamlit_argv(8501, "127.0.0.1", max_upload_mb=500)
    flags = {argv[i][2:]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}

    def text(value: object) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    for section, values in _config().items():
        for key, value in values.items():
            name = f"{section}.{key}"
            if name == "server.address":
                continue  # serve's own --address option
            assert flags.get(name) == text(value), name


@pytest.mark.browser
def test_served_from_another_folder_keeps_the_settings(
    sqlite_url: str, tmp_path: Path, browser: Any
) -> None:
    """Started outside the checkout: a forged upload is refused, no Deploy button or
    developer menu items, and an error box shows no traceback."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(READERSTUDY_DATABASE_URL=sqlite_url, READERSTUDY_DATA_DIR=str(tmp_path / "d"))
    env["PYTHONPATH"] = str(ROOT)
    port = free_port()
    log = tmp_path / "app.log"
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reader_app.cli", "serve", "--port", str(port)],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=elsewhere,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, log)
        request = urllib.request.Request(
            f"{url}/_stcore/upload_file/session/file", data=b"forged", method="PUT"
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=10)
        assert err.value.code == 403
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.goto(f"{url}/?token=not-a-valid-token")
        expect(page.get_by_text("This sign-in link is not valid")).to_be_visible(timeout=30_000)
        assert page.locator("[data-testid=stAppDeployButton]").count() == 0
        menu = page.locator("[data-testid=stMainMenu]")
        if menu.count():
            menu.click()
            expect(page.locator("[data-testid=stMainMenuPopover]")).to_be_visible()
            assert page.get_by_text("Clear cache").count() == 0
            assert page.get_by_text("Developer options").count() == 0
        context.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_the_served_app_refuses_a_request_without_xsrf_token(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A cross-site upload is refused for its origin (reader_app/web/origin_check.py); a staff
    session's own browser without the XSRF token is refused by Streamlit's XSRF check."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(READERSTUDY_DATABASE_URL=sqlite_url, READERSTUDY_DATA_DIR=str(tmp_path))
    settings = load_settings(env)
    with Session(make_engine(settings.database_url)) as session:
        study = make_study(session, settings.asset_dir, n_cases=1)
        token = make_reader(session, study, "C01", role="coordinator").token
        session.commit()
    app = start_app(env, tmp_path / "app.log")
    try:
        request = urllib.request.Request(
            f"{app.url}/_stcore/upload_file/session/file",
            data=b"forged",
            method="PUT",
            headers={"Origin": "https://evil.example"},
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=10)
        assert err.value.code == 403
        assert b"another web site" in err.value.read()
        cookies = page_cookies(app.url)
        with live_visit(app.url, cookies=cookies, query=f"token={token}", page="new-study") as s:
            no_xsrf = {k: v for k, v in cookies.items() if k != XSRF_COOKIE}
            status, _, body = http_request(
                app.url,
                "PUT",
                f"/_stcore/upload_file/{s.session_id}/file",
                body=b"forged",
                headers={"Content-Type": "multipart/form-data; boundary=x"},
                cookies=no_xsrf,
            )
            assert status == 403 and b"XSRF" in body
    finally:
        stop_app(app)
