"""The server processes the suite launched, so that none outlives it.

``start_app`` (tests/e2e/conftest.py) registers every server here the moment it is
spawned, and spawns it to die with the test process that started it (Linux
``PR_SET_PDEATHSIG``: a worker killed by a timeout or a crash takes its servers along).
At the end of the session, tests/conftest.py's ``pytest_sessionfinish`` asks
``still_running``: a server left running is stopped, named, and fails the run.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys

_LAUNCHED: dict[int, tuple[subprocess.Popen[bytes], str]] = {}
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGTERM when the process that spawned it dies."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def track(proc: subprocess.Popen[bytes], what: str) -> None:
    _LAUNCHED[proc.pid] = (proc, what)


def still_running() -> list[str]:
    """The launched processes still running (each then killed): ``"pid what"``."""
    left = []
    for pid, (proc, what) in sorted(_LAUNCHED.items()):
        if proc.poll() is None:
            left.append(f"{pid} {what}")
            proc.kill()
            proc.wait()
    _LAUNCHED.clear()
    return left
