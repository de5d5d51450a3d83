"""The address sign-in links point at.

A proxy's ``READERSTUDY_BASE_URL`` wins; otherwise links use the address this
data folder is served on (``serve``/``demo`` record it at start-up), so a link
made by ``readerstudy invite`` in another shell, or on a staff page, opens the
server that is really running, whatever ``--port`` it was given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from reader_app.core.settings import Settings

SERVED_FILE = "served-address"  # in the data folder; one line, the served base URL
_ANY_HOST = {"", "0.0.0.0", "::", "[::]"}


def served_url(address: str, port: int) -> str:
    """The URL a browser on this machine reaches ``address:port`` at."""
    host = "127.0.0.1" if address in _ANY_HOST else address
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def record_served(data_dir: Path, url: str) -> None:
    """Remember the served address for commands run beside the server (atomic write)."""
    target = data_dir / SERVED_FILE
    tmp = target.with_name(f".{SERVED_FILE}.{os.getpid()}")
    tmp.write_text(url + "\n", encoding="utf-8")
    tmp.replace(target)


def link_base(
    settings: Settings, env: Mapping[str, str] | None = None, *, served: str | None = None
) -> str:
    """Base URL for sign-in links: the configured one, else ``served`` (a caller about to
    serve there), else the recorded served one, else the default."""
    env = os.environ if env is None else env
    if env.get("READERSTUDY_BASE_URL", "").strip():
        return settings.base_url
    if served is not None:
        return served
    try:
        recorded = (settings.data_dir / SERVED_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return settings.base_url
    return recorded if recorded.startswith(("http://", "https://")) else settings.base_url
