"""Errors that name the file (or manifest row) and the problem, never a header value."""

from __future__ import annotations

from collections.abc import Sequence

from reader_app.core.errors import ReaderStudyError

FIRST_PROBLEMS = 200  # problems listed on a page or a terminal; the rest are counted


def first_lines(lines: Sequence[str], limit: int = FIRST_PROBLEMS) -> list[str]:
    """The first ``limit`` lines, then one line counting the rest (if any)."""
    more = len(lines) - limit
    return list(lines[:limit]) + ([f"... and {more:,} more"] if more > 0 else [])


class IngestError(ReaderStudyError):
    """One problem with one input: ``where`` is a manifest-relative path or ``file line N``."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


class ImportFailed(ReaderStudyError):
    """The whole import was refused; ``errors`` lists every problem found, not just the first."""

    def __init__(self, errors: list[str], report_text: str = "") -> None:
        lines = "\n".join(f"  - {e}" for e in first_lines(errors))
        head = f"import refused, nothing was written ({len(errors)} problem(s))"
        super().__init__(f"{head}:\n{lines}")
        self.errors = errors
        self.report_text = report_text
