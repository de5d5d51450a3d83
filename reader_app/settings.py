"""One typed settings object, read from ``READERSTUDY_*`` environment variables.

It fails fast: a bad database URL or an unwritable folder stops start-up with a
message that names the variable, instead of failing later mid-exam.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# name -> (default description, meaning); the README table is tested against this.
ENV_VARS: dict[str, tuple[str, str]] = {
    "READERSTUDY_DATABASE_URL": (
        "sqlite:///<data dir>/readerstudy.db",
        "SQLAlchemy URL of the store: a SQLite file or postgresql+psycopg://...",
    ),
    "READERSTUDY_DATA_DIR": ("./var", "folder for the SQLite file, assets and exports"),
    "READERSTUDY_ASSET_DIR": ("<data dir>/assets", "content-addressed PNG store"),
    "READERSTUDY_ENV": (
        "development",
        "development or production; production refuses unsafe defaults",
    ),
    "READERSTUDY_BASE_URL": (
        "http://127.0.0.1:8501",
        "public address used in printed sign-in links",
    ),
    "READERSTUDY_MAX_PIXELS": (
        "200000000",
        "largest pixel count an imported image may have (decompression-bomb cap)",
    ),
}


class SettingsError(RuntimeError):
    """Raised when the configuration cannot work; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    database_url: str
    data_dir: Path
    asset_dir: Path
    env: str = "development"
    base_url: str = "http://127.0.0.1:8501"
    max_pixels: int = 200_000_000
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def _writable_dir(path: Path, variable: str) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"{variable}: cannot create folder {path}: {exc.strerror}") from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise SettingsError(f"{variable}: folder {path} is not writable")
    return path


def _check_url(url: str) -> str:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise SettingsError(f"READERSTUDY_DATABASE_URL: not a database URL: {url!r}") from exc
    backend = parsed.get_backend_name()
    if backend not in {"sqlite", "postgresql"}:
        raise SettingsError(
            f"READERSTUDY_DATABASE_URL: unsupported database {backend!r}; "
            "use sqlite:///path.db or postgresql+psycopg://user@host/db"
        )
    if backend == "postgresql" and parsed.drivername == "postgresql":
        # plain postgresql:// would pick psycopg2, which we do not install.
        url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return url


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Read and validate the configuration; raise SettingsError with a clear message."""
    env = dict(os.environ if environ is None else environ)
    data_dir = Path(env.get("READERSTUDY_DATA_DIR", str(PROJECT_ROOT / "var"))).expanduser()
    data_dir = _writable_dir(data_dir.resolve(), "READERSTUDY_DATA_DIR")
    asset_dir = Path(env.get("READERSTUDY_ASSET_DIR", str(data_dir / "assets"))).expanduser()
    asset_dir = _writable_dir(asset_dir.resolve(), "READERSTUDY_ASSET_DIR")
    url = _check_url(
        env.get("READERSTUDY_DATABASE_URL", f"sqlite:///{data_dir / 'readerstudy.db'}")
    )
    mode = env.get("READERSTUDY_ENV", "development")
    if mode not in {"development", "production"}:
        raise SettingsError("READERSTUDY_ENV: must be 'development' or 'production'")
    base_url = env.get("READERSTUDY_BASE_URL", "http://127.0.0.1:8501").rstrip("/")
    if mode == "production" and base_url.startswith("http://") and "127.0.0.1" not in base_url:
        raise SettingsError("READERSTUDY_BASE_URL: production sign-in links must use https://")
    try:
        max_pixels = int(env.get("READERSTUDY_MAX_PIXELS", "200000000"))
    except ValueError as exc:
        raise SettingsError("READERSTUDY_MAX_PIXELS: must be a whole number") from exc
    return Settings(
        database_url=url,
        data_dir=data_dir,
        asset_dir=asset_dir,
        env=mode,
        base_url=base_url,
        max_pixels=max_pixels,
    )
