"""Streamlit's own protections stay on: XSRF, no CORS, no tracebacks for readers, loopback."""

from __future__ import annotations

import os
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from reader_app.commands.serve import streamlit_argv
from tests.e2e.conftest import start_app, stop_app

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"


def _config() -> dict[str, dict[str, object]]:
    return tomllib.loads(CONFIG.read_text())


def test_xsrf_protection_is_on_and_cors_off() -> None:
    server = _config()["server"]
    assert server["enableXsrfProtection"] is True
    assert server["enableCORS"] is False


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


def test_serve_does_not_override_the_protections() -> None:
    argv = " ".join(streamlit_argv(8501, "127.0.0.1"))
    for flag in ("enableXsrfProtection", "enableCORS", "showErrorDetails", "cookieSecret"):
        assert flag not in argv


@pytest.mark.slow
def test_the_served_app_refuses_a_request_without_xsrf_token(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A cross-site form post (no XSRF token) to the served app's upload endpoint is refused."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(READERSTUDY_DATABASE_URL=sqlite_url, READERSTUDY_DATA_DIR=str(tmp_path))
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
        assert b"XSRF" in err.value.read()
    finally:
        stop_app(app)
