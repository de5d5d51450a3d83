"""Settings fail fast with messages that name the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from reader_app.core.settings import ENV_VARS, Settings, SettingsError, load_settings


def test_defaults_are_sqlite_under_the_data_dir(tmp_path: Path) -> None:
    s = load_settings({"READERSTUDY_DATA_DIR": str(tmp_path)})
    assert s.database_url == f"sqlite:///{tmp_path / 'readerstudy.db'}"
    assert s.asset_dir == tmp_path / "assets" and s.asset_dir.is_dir()


def test_unset_variables_take_the_documented_defaults(tmp_path: Path) -> None:
    """What load_settings falls back to, what a hand-made Settings holds and
    what the README table says are one and the same."""
    loaded = load_settings({"READERSTUDY_DATA_DIR": str(tmp_path)})
    made = Settings(database_url="sqlite://", data_dir=tmp_path, asset_dir=tmp_path)
    documented = {
        "env": "READERSTUDY_ENV",
        "base_url": "READERSTUDY_BASE_URL",
        "max_pixels": "READERSTUDY_MAX_PIXELS",
        "max_voxels": "READERSTUDY_MAX_VOXELS",
        "max_inflate_bytes": "READERSTUDY_MAX_INFLATE_BYTES",
        "max_upload_mb": "READERSTUDY_MAX_UPLOAD_MB",
    }
    for field, variable in documented.items():
        assert getattr(loaded, field) == getattr(made, field), field
        assert str(getattr(loaded, field)) == ENV_VARS[variable][0], field
    assert (loaded.env, loaded.max_pixels, loaded.max_upload_mb) == ("development", 40_000_000, 500)
    assert loaded.import_root is None and made.import_root is None


def test_plain_postgresql_url_uses_psycopg(tmp_path: Path) -> None:
    s = load_settings(
        {"READERSTUDY_DATA_DIR": str(tmp_path), "READERSTUDY_DATABASE_URL": "postgresql://u@h/db"}
    )
    assert s.database_url == "postgresql+psycopg://u@h/db"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"READERSTUDY_DATABASE_URL": "not a url"}, "READERSTUDY_DATABASE_URL"),
        ({"READERSTUDY_DATABASE_URL": "mysql://u@h/db"}, "unsupported database 'mysql'"),
        ({"READERSTUDY_ENV": "staging"}, "READERSTUDY_ENV"),
        ({"READERSTUDY_MAX_PIXELS": "lots"}, "READERSTUDY_MAX_PIXELS"),
        (
            {"READERSTUDY_ENV": "production", "READERSTUDY_BASE_URL": "http://exam.example.org"},
            "https",
        ),
    ],
)
def test_bad_values_name_the_variable(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load_settings({"READERSTUDY_DATA_DIR": str(tmp_path), **env})


def test_unwritable_data_dir_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SettingsError, match="READERSTUDY_DATA_DIR"):
        load_settings({"READERSTUDY_DATA_DIR": str(blocker / "sub")})
