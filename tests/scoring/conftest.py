"""Shared builders for the scoring tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

Row = dict[str, Any]


def cell(
    responder: str,
    case_id: str | int,
    outcome: str,
    likert: int | None = None,
    *,
    kind: str = "model",
    group: str | None = None,
) -> Row:
    """One tidy row; outcome is correct / wrong / idk / invalid / failure."""
    row: Row = {
        "responder": responder,
        "kind": kind,
        "group": group,
        "case_id": str(case_id),
        "diagnosis": "dx",
        "likert": likert,
        "correct": None,
    }
    if outcome in ("correct", "wrong"):
        row["correct"] = 1 if outcome == "correct" else 0
    elif outcome == "idk":
        row.update(diagnosis="I don't know", likert=None)
    elif outcome == "invalid":
        row.update(likert=None)
    elif outcome == "failure":
        row.update(diagnosis="PARSE_FAILED", likert=None)
    else:
        raise ValueError(outcome)
    return row


def responder_rows(
    responder: str, outcomes: Sequence[tuple[str, int | None]], **kw: Any
) -> list[Row]:
    """Rows for cases 1..n from (outcome, likert) pairs."""
    return [cell(responder, i, o, lv, **kw) for i, (o, lv) in enumerate(outcomes, start=1)]


# SCORING.md section 7: five cases, one responder.
WORKED_EXAMPLE: list[tuple[str, int | None]] = [
    ("correct", 4),  # +5
    ("wrong", 3),  # -4
    ("idk", None),  # 0
    ("correct", 0),  # +1
    ("wrong", 1),  # -2
]


@pytest.fixture
def worked_rows() -> list[Row]:
    return responder_rows("model-x", WORKED_EXAMPLE)


@pytest.fixture(scope="session")
def make_rows() -> Callable[..., list[Row]]:
    """responder_rows(responder, [(outcome, likert), ...], kind=..., group=...)."""
    return responder_rows


@pytest.fixture(scope="session")
def make_cell() -> Callable[..., Row]:
    """cell(responder, case_id, outcome, likert, kind=..., group=...)."""
    return cell
