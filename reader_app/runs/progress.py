"""A text progress bar on stderr for model runs (no Streamlit: services take a callback)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from reader_app.runs.runner import RunProgress


class TextProgress:
    """``[#######.......] 12/40 answered=9 idk=2 failure=1 3.1/s``

    On a terminal the line redraws in place; in a log it prints a line at most
    every ``every_s`` seconds and at the end.
    """

    def __init__(self, stream: TextIO | None = None, width: int = 30, every_s: float = 5.0):
        self.stream = stream or sys.stderr
        self.width = width
        self.every_s = every_s
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.monotonic()
        self._first_done: int | None = None
        self._last_print = 0.0

    def line(self, p: RunProgress) -> str:
        if self._first_done is None:
            self._first_done = p.done
        filled = int(self.width * p.done / p.total) if p.total else self.width
        counts = " ".join(f"{k}={v}" for k, v in sorted(p.counts.items()))
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = (p.done - self._first_done) / elapsed
        bar = "#" * filled + "." * (self.width - filled)
        return f"[{bar}] {p.done}/{p.total} {counts} {rate:.1f}/s".replace("  ", " ")

    def __call__(self, p: RunProgress) -> None:
        text = self.line(p)
        now = time.monotonic()
        final = p.done >= p.total
        if self._tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        elif final or now - self._last_print >= self.every_s:
            self.stream.write(text + "\n")
            self._last_print = now
        self.stream.flush()
