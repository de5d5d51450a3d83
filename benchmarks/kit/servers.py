"""The app (``readerstudy serve``) and the bare-Streamlit floor, on free loopback ports.

Each server runs in the repository (its ``.streamlit/config.toml``), without any
``READERSTUDY_*`` or ``STREAMLIT_*`` variable of the caller, logs to a file, and
is healthy (``/_stcore/health``) before a driver gets it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.kit.doc import ROOT

BARE_APP = ROOT / "benchmarks" / "bare_app.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path


def wait_healthy(server: Server, timeout: float = 120) -> None:
    """Until ``/_stcore/health`` says ok; the server's log tail if it exits or never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as resp:
                if resp.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server did not become healthy:\n{server.log.read_text()[-3000:]}")


def base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("STREAMLIT_", "READERSTUDY_"))}


@contextmanager
def served(
    argv: Sequence[str],
    env: dict[str, str],
    log: Path,
    port_flag: str = "--server.port",
    cwd: Path = ROOT,
    wait: bool = True,
) -> Iterator[Server]:
    """A Streamlit server on a free loopback port (cwd = the repo: its .streamlit/config.toml).

    ``wait=False`` hands the server over as soon as it is started, so a driver can
    start several and then ``wait_healthy`` each: they boot side by side."""
    port = free_port()
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [*argv, port_flag, str(port)],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            # a session of its own, as a service's: with the kernel's autogroups the
            # CPU is shared between sessions first, and the driver's session may have
            # been niced as a whole (a tool's shell, at 19 here), which would leave the
            # server behind the browsers Playwright starts in sessions of their own
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", proc, log)
    try:
        if wait:
            wait_healthy(server)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve_app(
    database_url: str,
    data_dir: Path,
    log: Path,
    root: Path = ROOT,
    wait: bool = True,
    env: dict[str, str] | None = None,
) -> Any:
    """``readerstudy serve``; ``root``: another checkout's code (for a before/after run);
    ``env``: more variables (e.g. ``READERSTUDY_SCORING_WORKER``)."""
    env = (
        base_env()
        | (env or {})
        | {
            "READERSTUDY_DATABASE_URL": database_url,
            "READERSTUDY_DATA_DIR": str(data_dir),
        }
    )
    if root != ROOT:
        env["PYTHONPATH"] = str(root)
    argv = [sys.executable, "-m", "reader_app.cli", "serve"]
    return served(argv, env, log, "--port", root, wait)


def serve_floor(folder: Path, log: Path, wait: bool = True) -> Any:
    argv = [sys.executable, "-m", "streamlit", "run", str(BARE_APP)]
    argv += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    return served(argv, base_env() | {"BENCH_FLOOR_DIR": str(folder)}, log, wait=wait)
