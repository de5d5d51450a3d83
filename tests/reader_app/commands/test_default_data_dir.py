"""The default data folder is ``./var`` in the folder a command runs in (README), wherever
the package is installed; a command that finds no study names the database it looked in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reader_app.core.settings import ENV_VARS, load_settings

ROOT = Path(__file__).resolve().parents[3]


def _env_without_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("READERSTUDY_")}


def test_the_default_is_var_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings({})
    assert settings.data_dir == tmp_path / "var"
    assert settings.database_url == f"sqlite:///{tmp_path / 'var' / 'readerstudy.db'}"
    assert ENV_VARS["READERSTUDY_DATA_DIR"][0] == "./var"
    readme = ROOT.joinpath("README.md").read_text()
    assert "| `READERSTUDY_DATA_DIR` | `./var` |" in readme
    assert "current working directory" in readme


def test_a_command_run_from_another_folder_uses_and_names_that_folders_database(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "somewhere else"
    elsewhere.mkdir()
    assert not str(elsewhere).startswith(str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "reader_app.cli", "export", "nope", "--what", "responses"],
        cwd=elsewhere,
        env=_env_without_settings(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    database = elsewhere / "var" / "readerstudy.db"
    assert done.returncode == 2, done.stderr  # a refusal (reader_app.core.errors)
    assert "no study named 'nope'" in done.stderr
    assert f"the database {database}" in done.stderr  # the one it looked in, by full path
    assert "READERSTUDY_DATA_DIR" in done.stderr  # and how to choose another
    assert database.is_file()  # the documented default, not the checkout's var/
