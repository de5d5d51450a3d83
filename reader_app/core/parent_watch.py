"""A pool worker ends soon after the process that started it is gone.

A parent killed outright (SIGKILL, a crash, the OOM killer) runs no shutdown, and
a spawned pool worker lives on, re-parented to init, holding what it opened
(database connections, files, memory). PR_SET_PDEATHSIG does not fit a
ProcessPoolExecutor: the pool starts its processes from whichever thread submits
(a Streamlit script thread, say), and that signal fires when that thread ends.
So a daemon thread in the worker watches its parent's pid. Standard library only:
workers import this before anything else.
"""

from __future__ import annotations

import os
import threading
import time


def watch_parent(parent_pid: int, every: float = 1.0) -> None:
    """A ``ProcessPoolExecutor`` initializer: ``initargs=(os.getpid(),)``."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()
