"""The small tidy frame the chart tests share (its fixture, ``frame``, is in conftest.py)."""

from __future__ import annotations

import pandas as pd

HOSTILE = '</text><script>alert("x")</script>&amp;'
CASES = ("a", "b", "c", "d")


def _row(
    who: str,
    kind: str,
    group: str | None,
    case: str,
    status: str,
    likert: int | None = None,
    correct: int | None = None,
) -> dict[str, object]:
    return {
        "responder": who,
        "kind": kind,
        "group": group,
        "case_id": case,
        "status": status,
        "diagnosis": "" if status == "idk" else "dx",
        "likert": likert,
        "correct": correct,
    }


def chart_frame() -> pd.DataFrame:
    """Three responders on four cases, every outcome the charts draw."""
    rows: list[dict[str, object]] = []
    # R1 (board-certified): correct L4 on a, b; wrong L3 on c; idk on d
    rows += [_row("R1", "human", "board-certified", c, "answered", 4, 1) for c in "ab"]
    rows += [_row("R1", "human", "board-certified", "c", "answered", 3, 0)]
    rows += [_row("R1", "human", "board-certified", "d", "idk")]
    # R2 (PGY3): correct L2 on a, wrong L1 on b, c, d
    rows += [_row("R2", "human", "PGY3", "a", "answered", 2, 1)]
    rows += [_row("R2", "human", "PGY3", c, "answered", 1, 0) for c in "bcd"]
    # the model: wrong L4 on a, correct L4 on b, c, d
    rows += [_row(HOSTILE, "model", "vendor", "a", "answered", 4, 0)]
    rows += [_row(HOSTILE, "model", "vendor", c, "answered", 4, 1) for c in "bcd"]
    return pd.DataFrame(rows)
