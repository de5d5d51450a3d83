"""One typed settings object, read from ``READERSTUDY_*`` environment variables.

It fails fast: a bad database URL or an unwritable folder stops start-up with a
message that names the variable, instead of failing later mid-exam. Each
default is written once, below, and used by ``Settings``, ``load_settings`` and
the README table (``ENV_VARS``).

API keys are not settings: a judge's or a model run's key is read from the
environment at the moment of the call, from the variable the study.toml judge
(``api_key_env``) or the command (``--judge-key-env``, ``--api-key-env``) names,
``READERSTUDY_JUDGE_API_KEY`` by default (``grading.diagnosis_judge.DEFAULT_KEY_ENV``).
So a key never sits in this long-lived, cached object.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from reader_app.core.errors import ReaderStudyError

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the checkout (demo data lives here)
DEFAULT_DATA_DIR = "./var"  # relative to the folder a command runs in, not to the package
DEFAULT_ENV = "development"
DEFAULT_BASE_URL = "http://127.0.0.1:8501"
DEFAULT_MAX_PIXELS = 40_000_000
DEFAULT_MAX_VOXELS = 200_000_000
DEFAULT_MAX_INFLATE_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_UPLOAD_MB = 500
DEFAULT_LOG_LEVEL = "INFO"  # read by reader_app.core.logs, before the settings
MIN_COOKIE_SECRET = 32  # characters; secrets.token_hex(32) gives 64
# bits estimated from the secret's own characters (their Shannon entropy times its
# length): 'a' x 36 has 0, a random 32-character hex string about 112 (its lowest in
# 200,000 draws: 90), secrets.token_hex(32) about 250
MIN_COOKIE_SECRET_BITS = 80
# published in .streamlit/secrets.toml.example: known to anyone, so they sign nothing
PLACEHOLDER_COOKIE_SECRETS = frozenset(
    {"change-me-to-a-long-random-string", "<the same long random string on every replica>"}
)

# name -> (default description, meaning); the README table is tested against this.
ENV_VARS: dict[str, tuple[str, str]] = {
    "READERSTUDY_DATABASE_URL": (
        "sqlite:///<data dir>/readerstudy.db",
        "SQLAlchemy URL of the store: a SQLite file or postgresql+psycopg://...",
    ),
    "READERSTUDY_DATA_DIR": (
        DEFAULT_DATA_DIR,
        "folder for the SQLite file, assets and exports; the default is the folder `var` "
        "in the current working directory (where the command runs), created if absent",
    ),
    "READERSTUDY_ASSET_DIR": ("<data dir>/assets", "content-addressed PNG store"),
    "READERSTUDY_ENV": (
        DEFAULT_ENV,
        "development or production; production refuses unsafe defaults",
    ),
    "READERSTUDY_BASE_URL": (
        DEFAULT_BASE_URL,
        "public address used in printed sign-in links",
    ),
    "READERSTUDY_MAX_PIXELS": (
        str(DEFAULT_MAX_PIXELS),
        "largest pixel count of one imported 2-D image (a picture, a DICOM frame, a slice),"
        " checked from the header before decoding",
    ),
    "READERSTUDY_MAX_VOXELS": (
        str(DEFAULT_MAX_VOXELS),
        "largest voxel count of one imported volume (a DICOM series or a NIfTI)",
    ),
    "READERSTUDY_MAX_INFLATE_BYTES": (
        str(DEFAULT_MAX_INFLATE_BYTES),
        "largest decompressed size in bytes of a .nii.gz "
        "(decompressed end to end; held whole unless it stores axial planes)",
    ),
    "READERSTUDY_LOG_LEVEL": (
        DEFAULT_LOG_LEVEL,
        "DEBUG, INFO, WARNING or ERROR: what the app and the CLI log to stderr",
    ),
    "READERSTUDY_MAX_UPLOAD_MB": (
        str(DEFAULT_MAX_UPLOAD_MB),
        "largest study ZIP a coordinator may upload in the browser, in MB; also the cap on "
        "its uncompressed size (Streamlit's server.maxUploadSize is set to match)",
    ),
    "READERSTUDY_IMPORT_ROOT": (
        "(off)",
        "server folder whose sub-folders a coordinator may import from in the browser; "
        "unset: no server-folder import",
    ),
    "READERSTUDY_SCORING_WORKER": (
        "on",
        "on or off: analyst pages load and score the study in a worker process at low CPU"
        " priority (reader_app.analysis.scoring_worker), so an analyst never slows the readers;"
        " off: in the serving process",
    ),
    "READERSTUDY_PREWARM": (
        "on",
        "on or off: at start, the server imports what the first page runs need and scores the"
        " latest studies for the analysts' sign-in, in a background thread"
        " (reader_app.web.prewarm); off: the first page runs do it",
    ),
}


class SettingsError(ReaderStudyError, RuntimeError):
    """Raised when the configuration cannot work; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    database_url: str
    data_dir: Path
    asset_dir: Path
    env: str = DEFAULT_ENV
    base_url: str = DEFAULT_BASE_URL
    max_pixels: int = DEFAULT_MAX_PIXELS
    max_voxels: int = DEFAULT_MAX_VOXELS
    max_inflate_bytes: int = DEFAULT_MAX_INFLATE_BYTES
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB
    import_root: Path | None = None  # None: server-folder import is off

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


def default_secrets_files() -> list[Path]:
    """Where Streamlit reads secrets.toml by default (``secrets.files``), later wins."""
    return [Path.home() / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml"]


def check_cookie_secret(where: str, secret: object) -> None:
    """Refuse a secret that signs nothing; ``where`` names the setting and its source."""
    if not isinstance(secret, str) or not secret.strip():
        raise SettingsError(f"{where}: missing or empty; set a long random string")
    if secret.strip() in PLACEHOLDER_COOKIE_SECRETS or secret.strip().startswith("<"):
        raise SettingsError(
            f"{where}: still the example's placeholder, which anyone can sign cookies with; "
            'set a long random string (python -c "import secrets; print(secrets.token_hex(32))")'
        )
    if len(secret) < MIN_COOKIE_SECRET:
        raise SettingsError(
            f"{where}: {len(secret)} characters; use at least {MIN_COOKIE_SECRET} random ones"
        )
    bits = secret_bits(secret)
    if bits < MIN_COOKIE_SECRET_BITS or secret in (secret + secret)[1:-1]:
        raise SettingsError(
            f"{where}: long but predictable (about {bits:.0f} bits from its characters, "
            f"at least {MIN_COOKIE_SECRET_BITS} needed, or one piece repeated); set a long "
            'random string (python -c "import secrets; print(secrets.token_hex(32))")'
        )


def secret_bits(secret: str) -> float:
    """An upper estimate of a secret's entropy: the Shannon entropy of its characters'
    frequencies times its length (0 for one character repeated)."""
    n = len(secret)
    return sum(c / n * math.log2(n / c) for c in Counter(secret).values()) * n


def check_cookie_secrets(env: Mapping[str, str], secrets_files: Sequence[Path]) -> None:
    """Refuse a cookie secret that signs nothing: the example's, empty, or short.

    ``[auth] cookie_secret`` in secrets.toml signs Streamlit's identity cookie
    (OIDC): whoever knows it can sign in as any invited e-mail.
    ``STREAMLIT_SERVER_COOKIE_SECRET`` is set when several replicas must share one
    (docs/deploy.md); unset, Streamlit draws a random one per process.
    """
    for path in secrets_files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{path}: cannot read it as TOML: {exc}") from exc
        auth = data.get("auth")
        if isinstance(auth, Mapping):
            check_cookie_secret(f"{path}: [auth] cookie_secret", auth.get("cookie_secret"))
    if "STREAMLIT_SERVER_COOKIE_SECRET" in env:
        check_cookie_secret(
            "STREAMLIT_SERVER_COOKIE_SECRET (server.cookieSecret)",
            env["STREAMLIT_SERVER_COOKIE_SECRET"],
        )


def load_settings(
    environ: dict[str, str] | None = None, secrets_files: Sequence[Path] | None = None
) -> Settings:
    """Read and validate the configuration; raise SettingsError with a clear message.

    ``secrets_files``: the secrets.toml files whose cookie secret is checked
    (default: where Streamlit reads them, ``default_secrets_files()``).
    """
    env = dict(os.environ if environ is None else environ)
    check_cookie_secrets(env, default_secrets_files() if secrets_files is None else secrets_files)
    data_dir = Path(env.get("READERSTUDY_DATA_DIR", DEFAULT_DATA_DIR)).expanduser()
    data_dir = _writable_dir(data_dir.resolve(), "READERSTUDY_DATA_DIR")
    asset_dir = Path(env.get("READERSTUDY_ASSET_DIR", str(data_dir / "assets"))).expanduser()
    asset_dir = _writable_dir(asset_dir.resolve(), "READERSTUDY_ASSET_DIR")
    url = _check_url(
        env.get("READERSTUDY_DATABASE_URL", f"sqlite:///{data_dir / 'readerstudy.db'}")
    )
    mode = env.get("READERSTUDY_ENV", DEFAULT_ENV)
    if mode not in {"development", "production"}:
        raise SettingsError("READERSTUDY_ENV: must be 'development' or 'production'")
    base_url = env.get("READERSTUDY_BASE_URL", DEFAULT_BASE_URL).rstrip("/")
    if mode == "production" and base_url.startswith("http://") and "127.0.0.1" not in base_url:
        raise SettingsError("READERSTUDY_BASE_URL: production sign-in links must use https://")
    caps = {}
    for name, default in (
        ("READERSTUDY_MAX_PIXELS", DEFAULT_MAX_PIXELS),
        ("READERSTUDY_MAX_VOXELS", DEFAULT_MAX_VOXELS),
        ("READERSTUDY_MAX_INFLATE_BYTES", DEFAULT_MAX_INFLATE_BYTES),
    ):
        try:
            caps[name] = int(env.get(name, str(default)))
        except ValueError as exc:
            raise SettingsError(f"{name}: must be a whole number") from exc
        if caps[name] <= 0:
            raise SettingsError(f"{name}: must be greater than 0")
    try:
        max_upload_mb = int(env.get("READERSTUDY_MAX_UPLOAD_MB", str(DEFAULT_MAX_UPLOAD_MB)))
    except ValueError as exc:
        raise SettingsError("READERSTUDY_MAX_UPLOAD_MB: must be a whole number") from exc
    if max_upload_mb < 1:
        raise SettingsError("READERSTUDY_MAX_UPLOAD_MB: must be at least 1")
    import_root = _import_root(env.get("READERSTUDY_IMPORT_ROOT", "").strip())
    return Settings(
        database_url=url,
        data_dir=data_dir,
        asset_dir=asset_dir,
        env=mode,
        base_url=base_url,
        max_pixels=caps["READERSTUDY_MAX_PIXELS"],
        max_voxels=caps["READERSTUDY_MAX_VOXELS"],
        max_inflate_bytes=caps["READERSTUDY_MAX_INFLATE_BYTES"],
        max_upload_mb=max_upload_mb,
        import_root=import_root,
    )


def _import_root(raw: str) -> Path | None:
    if not raw:
        return None
    root = Path(raw).expanduser().resolve()
    if not root.is_dir():
        raise SettingsError(f"READERSTUDY_IMPORT_ROOT: {root} is not a folder")
    return root
