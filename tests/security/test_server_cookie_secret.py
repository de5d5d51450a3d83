"""``server.cookieSecret`` is checked wherever it can be set (issue 32 item 4, replicas).

Unset, Streamlit draws a random secret per process (one replica); set, for replicas
that must share it, it may not be the example's, empty or short, whether it came
from the user's or the project's ``.streamlit/config.toml``, the environment or a
flag. The source is named in the refusal. Streamlit's own config loading is asked
(reader_app/web/server_secret.py), after it parsed the files as the server does.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit import config

from reader_app.core.settings import MIN_COOKIE_SECRET, SettingsError
from reader_app.web.server_secret import check_server_cookie_secret
from tests.e2e.conftest import ROOT, free_port
from tests.security.test_cookie_secret import PLACEHOLDER, _site_env

WEAK = [
    (PLACEHOLDER, "placeholder"),
    ("<the same long random string on every replica>", "placeholder"),
    ("", "missing or empty"),
    ("x" * (MIN_COOKIE_SECRET - 1), f"at least {MIN_COOKIE_SECRET}"),
    # issue 39: long enough but predictable (0 bits; a piece repeated)
    ("a" * 36, "long but predictable (about 0 bits"),
    ("abcdefgh" * 5, "long but predictable"),
]


def _config_toml(folder: Path, secret: str) -> Path:
    path = folder / ".streamlit" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"[server]\ncookieSecret = {json.dumps(secret)}\n")
    return path


@pytest.fixture
def streamlit_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home and a project folder of their own; Streamlit's config re-read after the test."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("STREAMLIT_SERVER_COOKIE_SECRET", raising=False)
    monkeypatch.chdir(project)
    yield tmp_path
    monkeypatch.undo()
    config.get_config_options(force_reparse=True)


def _parse(flags: dict[str, str] | None = None) -> None:
    config.get_config_options(force_reparse=True, options_from_flags=flags or {})


@pytest.mark.parametrize(("secret", "says"), WEAK)
@pytest.mark.parametrize("where", ["home", "project"])
def test_a_weak_secret_in_a_config_toml_is_refused_naming_the_file(
    streamlit_config: Path, where: str, secret: str, says: str
) -> None:
    path = _config_toml(streamlit_config / where, secret)
    _parse()
    with pytest.raises(SettingsError) as err:
        check_server_cookie_secret()
    assert f"server.cookieSecret (set in {path})" in str(err.value)
    assert says in str(err.value)


@pytest.mark.parametrize(("secret", "says"), WEAK)
def test_a_weak_secret_in_the_environment_or_a_flag_is_refused(
    streamlit_config: Path, monkeypatch: pytest.MonkeyPatch, secret: str, says: str
) -> None:
    monkeypatch.setenv("STREAMLIT_SERVER_COOKIE_SECRET", secret)
    _parse()
    with pytest.raises(SettingsError, match="set in STREAMLIT_SERVER_COOKIE_SECRET") as err:
        check_server_cookie_secret()
    assert says in str(err.value)
    monkeypatch.delenv("STREAMLIT_SERVER_COOKIE_SECRET")
    # what `streamlit run` hands over from its command line (click maps the variable too)
    _parse({"server.cookieSecret": secret})
    with pytest.raises(SettingsError, match=re.escape("--server.cookieSecret")) as err:
        check_server_cookie_secret()
    assert says in str(err.value)


def test_the_project_file_wins_over_the_home_file_and_is_the_one_named(
    streamlit_config: Path,
) -> None:
    _config_toml(streamlit_config / "home", secrets.token_hex(32))
    project = _config_toml(streamlit_config / "project", "short")
    _parse()
    with pytest.raises(SettingsError, match=re.escape(f"set in {project}")):
        check_server_cookie_secret()
    _config_toml(streamlit_config / "home", "short")
    _config_toml(streamlit_config / "project", secrets.token_hex(32))
    _parse()
    check_server_cookie_secret()  # Streamlit serves the project's strong one


def test_unset_or_strong_passes(streamlit_config: Path) -> None:
    _parse()
    assert config.get_where_defined("server.cookieSecret") == "<default>"
    check_server_cookie_secret()  # Streamlit's random per-process secret
    _config_toml(streamlit_config / "project", secrets.token_urlsafe(48))
    _parse()
    check_server_cookie_secret()


def _streamlit_run(cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = _site_env(cwd)
    env["HOME"] = str(cwd / "home")
    return subprocess.run(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "reader_app" / "web" / "asgi.py"),
         "--server.port", str(free_port()), "--server.headless", "true", *extra],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_the_server_refuses_to_start_with_a_weak_secret_from_either_config_toml(
    tmp_path: Path,
) -> None:
    """As served: `readerstudy serve` (project file) and `streamlit run` (user's file)."""
    project = _config_toml(tmp_path, "short")
    done = subprocess.run(
        [sys.executable, "-m", "reader_app.cli", "serve", "--port", str(free_port())],
        env={**_site_env(tmp_path), "HOME": str(tmp_path / "home")},
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"server.cookieSecret (set in {project}): 5 characters" in done.stderr
    project.unlink()
    home = _config_toml(tmp_path / "home", PLACEHOLDER)
    done = _streamlit_run(tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"server.cookieSecret (set in {home}): still the example's placeholder" in done.stderr


@pytest.mark.slow
def test_streamlit_itself_refuses_the_secret_as_a_flag(tmp_path: Path) -> None:
    """`--server.cookieSecret` on `streamlit run` never gets as far as our check."""
    (tmp_path / "home").mkdir()
    done = _streamlit_run(tmp_path, "--server.cookieSecret", secrets.token_hex(32))
    assert done.returncode != 0
    assert "server.cookieSecret" in done.stderr + done.stdout
    assert "not allowed" in done.stderr + done.stdout
