"""A known cookie secret opens no door (issue 32 item 4).

Streamlit signs its identity cookie ``_streamlit_user`` (the OIDC sign-in) with
``[auth] cookie_secret`` (itsdangerous, salted with the cookie's name). With
the example's placeholder left in secrets.toml, anyone could sign a cookie
for an invited coordinator's e-mail. The attack is made here as found: the
cookie forged with the published placeholder, sent on a bare websocket.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from sqlmodel import Session
from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

from reader_app.core.db import make_engine, migrate
from reader_app.core.settings import (
    MIN_COOKIE_SECRET,
    SettingsError,
    check_cookie_secrets,
    load_settings,
)
from tests.e2e.conftest import ROOT, free_port, served_env, wait_healthy
from tests.factories import make_reader, make_study
from tests.security.bare_client import page_cookies, visit

EXAMPLE = ROOT / ".streamlit" / "secrets.toml.example"
PLACEHOLDER = tomllib.loads(EXAMPLE.read_text())["auth"]["cookie_secret"]
EMAIL = "c01@hospital.example"


def _secrets(folder: Path, cookie_secret: str, origin: str = "http://127.0.0.1:8501") -> Path:
    path = folder / ".streamlit" / "secrets.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[auth]\n"
        f'redirect_uri = "{origin}/oauth2callback"\n'
        f"cookie_secret = {json.dumps(cookie_secret)}\n"
        'client_id = "readerstudy"\nclient_secret = "x"\n'
        'server_metadata_url = "https://idp.example/.well-known/openid-configuration"\n'
    )
    return path


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        (PLACEHOLDER, "placeholder"),
        ("", "missing or empty"),
        ("   ", "missing or empty"),
        ("x" * (MIN_COOKIE_SECRET - 1), f"at least {MIN_COOKIE_SECRET}"),
        ("a" * 36, "long but predictable (about 0 bits"),  # issue 39
        ("ab" * 20, "long but predictable (about 40 bits"),  # 40 chars x 1 bit each
    ],
)
def test_a_weak_auth_cookie_secret_is_refused_naming_the_setting(
    tmp_path: Path, secret: str, says: str
) -> None:
    path = _secrets(tmp_path, secret)
    with pytest.raises(SettingsError) as err:
        check_cookie_secrets({}, [path])
    assert f"{path}: [auth] cookie_secret" in str(err.value) and says in str(err.value)
    # the settings check of every command and of the app runs it
    with pytest.raises(SettingsError, match=r"\[auth\] cookie_secret"):
        load_settings({"READERSTUDY_DATA_DIR": str(tmp_path / "d")}, secrets_files=[path])


def test_an_auth_section_without_a_cookie_secret_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secrets.toml"
    path.write_text('[auth]\nredirect_uri = "https://x.example/oauth2callback"\n')
    with pytest.raises(SettingsError, match="cookie_secret: missing or empty"):
        check_cookie_secrets({}, [path])


@pytest.mark.parametrize(
    "secret", ["", "short", "<the same long random string on every replica>", PLACEHOLDER]
)
def test_a_weak_shared_server_cookie_secret_is_refused(secret: str) -> None:
    with pytest.raises(SettingsError, match="STREAMLIT_SERVER_COOKIE_SECRET"):
        check_cookie_secrets({"STREAMLIT_SERVER_COOKIE_SECRET": secret}, [])


def test_proper_secrets_and_no_auth_section_pass(tmp_path: Path) -> None:
    check_cookie_secrets({}, [tmp_path / "absent.toml"])
    no_auth = tmp_path / "no-auth.toml"
    no_auth.write_text('[other]\nkey = "v"\n')
    good = _secrets(tmp_path, secrets.token_hex(32))
    strong = {"STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_urlsafe(48)}
    check_cookie_secrets(strong, [no_auth, good])


def _forged_user_cookie(secret: str, origin: str) -> str:
    """``_streamlit_user`` as Streamlit's /oauth2callback sets it, signed with ``secret``."""
    payload = {"email": EMAIL, "email_verified": True, "origin": origin, "is_logged_in": True}
    return create_signed_value(secret, "_streamlit_user", json.dumps(payload)).decode()


def _site_env(root: Path) -> dict[str, str]:
    return served_env(f"sqlite:///{root / 'rs.db'}", root / "data", PYTHONPATH=str(ROOT))


@pytest.mark.slow
@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["demo", "--no-serve"]])
def test_serve_and_demo_refuse_to_start_with_the_placeholder(
    tmp_path: Path, command: list[str]
) -> None:
    _secrets(tmp_path, PLACEHOLDER)
    done = subprocess.run(
        [sys.executable, "-m", "reader_app.cli", *command],
        env=_site_env(tmp_path),
        cwd=tmp_path,  # Streamlit reads .streamlit/secrets.toml from here
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "[auth] cookie_secret" in done.stderr and "placeholder" in done.stderr
    assert not (tmp_path / "data" / "readerstudy.db").exists()  # refused before anything


@pytest.mark.slow
def test_with_a_proper_secret_the_forged_cookie_gets_no_staff_page(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    real = secrets.token_hex(32)
    env = _site_env(tmp_path)
    settings = load_settings(env, secrets_files=[])
    migrate(settings.database_url)
    with Session(make_engine(settings.database_url)) as session:
        study = make_study(session, settings.asset_dir, n_cases=1)
        make_reader(session, study, "C01", role="coordinator", email=EMAIL)
        session.commit()
    _secrets(tmp_path, real, origin=url)
    log = tmp_path / "app.log"
    with log.open("ab") as fh:  # served from the folder that holds the secrets.toml
        proc = subprocess.Popen(
            [sys.executable, "-m", "reader_app.cli", "serve", "--port", str(port)],
            env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=tmp_path,
        )  # fmt: skip
    try:
        wait_healthy(url, proc, log)
        cookies = page_cookies(url)
        forged = visit(
            url, cookies={**cookies, "_streamlit_user": _forged_user_cookie(PLACEHOLDER, url)},
            origin=url,
        )  # fmt: skip
        assert "Key CSV" not in forged.text and "Sign in with your institution" in forged.text
        # control: the same cookie signed with the server's real secret is a coordinator
        # (what the placeholder gave anyone before start-up refused it)
        signed = visit(
            url, cookies={**cookies, "_streamlit_user": _forged_user_cookie(real, url)},
            origin=url,
        )  # fmt: skip
        assert "Key CSV" in signed.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_random_secrets_of_the_minimum_length_are_accepted() -> None:
    """The entropy check refuses no secret made the way docs/deploy.md says, even at the
    shortest length allowed: 2,000 random 32-character hex strings (about 112 bits by the
    estimate; the lowest of 200,000 draws was 90, over the 80 needed), and a passphrase."""
    for _ in range(2000):
        check_cookie_secrets({"STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(16)}, [])
    check_cookie_secrets(
        {"STREAMLIT_SERVER_COOKIE_SECRET": "correct horse battery staple, moon river"}, []
    )
