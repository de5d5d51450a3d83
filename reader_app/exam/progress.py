"""Progress as the reader reads it: "Practice 2 of 3", then "Case 37 of 200"."""

from __future__ import annotations

from dataclasses import dataclass

from reader_app.exam.order import OrderSummary


@dataclass(frozen=True)
class Progress:
    label: str
    fraction: float  # 0..1 for the progress bar
    practice: bool


def progress_at(slot: int | None, summary: OrderSummary) -> Progress:
    """Progress while showing ``slot`` (None: every case answered)."""
    if slot is None:
        done = summary.scored
        return Progress(f"All {done} cases answered", 1.0, False)
    if slot < summary.practice:
        return Progress(
            f"Practice {slot + 1} of {summary.practice}",
            slot / max(summary.practice, 1),
            True,
        )
    number = slot - summary.practice + 1
    return Progress(
        f"Case {number} of {summary.scored}",
        (number - 1) / max(summary.scored, 1),
        False,
    )
