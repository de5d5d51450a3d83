"""The one progress display of the CLI (import, demo, run-model), drawn by tqdm.

tqdm formats the line (bar, count, elapsed, rate, what is being done); we choose
the sink. On a terminal the line redraws in place; anywhere else (a log, a CI
job, a pipe) it prints whole lines: at most one every ``every_s`` seconds, and
always the last one, so a log shows progress without a wall of carriage returns.

Services never import this: they take a plain callback (``ingest.importer``'s
``progress(ImportProgress)``, ``runs.runner``'s ``progress(RunProgress)``),
and the two adapters below turn those calls into the display.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Protocol, TextIO

from tqdm import tqdm

BAR_CHARS = " #"  # tqdm's ASCII bar: '#' for done, ' ' for to do; readable in any log


class ProgressLine:
    """One progress line on ``stream`` (default: stderr)."""

    def __init__(
        self, label: str, unit: str, stream: TextIO | None = None, every_s: float = 5.0
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: tqdm | None = None
        self._start = time.monotonic()
        self._last_line = float("-inf")
        self._first: int | None = None  # a resumed run starts part-way: the rate counts from here

    def show(self, done: int, total: int, status: str = "") -> None:
        final = done >= total
        if self._first is None:
            self._first = done
        if self.tty:
            if self._bar is None:
                self._bar = tqdm(
                    total=total,
                    initial=done,
                    desc=self.label,
                    unit=self.unit,
                    file=self.stream,
                    ascii=BAR_CHARS,
                    leave=True,
                )
            self._bar.total = total
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.update(done - self._bar.n)
            if final:
                self._bar.close()
            return
        now = time.monotonic()
        if final or now - self._last_line >= self.every_s:
            meter = tqdm.format_meter(
                done,
                total,
                now - self._start,
                prefix=self.label,
                postfix=status,
                ascii=BAR_CHARS,
                unit=self.unit,
                initial=self._first,
            )
            self.stream.write(meter + "\n")
            self.stream.flush()
            self._last_line = now


class ImportStatus(Protocol):
    """What an import reports (``ingest.importer.ImportProgress``)."""

    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def message(self) -> str: ...


class StepProgress(ProgressLine):
    """``progress(ImportProgress)``, as the importer calls it; a line per step in a log."""

    def __init__(self, stream: TextIO | None = None, label: str = "import") -> None:
        super().__init__(label, "case", stream, every_s=0.0)

    def __call__(self, p: ImportStatus) -> None:
        self.show(p.done, p.total, p.message)


class RunStatus(Protocol):
    """What a model run reports (``runs.runner.RunProgress``)."""

    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def counts(self) -> Mapping[str, int]: ...


class RunProgressBar(ProgressLine):
    """``progress(RunProgress)``, as the runner calls it: the outcome counts as the status."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 5.0) -> None:
        super().__init__("run", "answer", stream, every_s)

    def __call__(self, p: RunStatus) -> None:
        counts = " ".join(f"{k}={v}" for k, v in sorted(p.counts.items()))
        self.show(p.done, p.total, counts)
