"""One case of a model run: what is asked (``CaseJob``) and what came back (``Outcome``).

Apart from runs/runner.py so that the askers (runner.ask, runs/report_ask.py)
and the loop that schedules them import these without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reader_app.exam.next_case import ImageView


@dataclass(frozen=True)
class CaseJob:
    case_id: int
    source_id: str
    history: str | None
    images: tuple[ImageView, ...]
    answer: str = "diagnosis"  # or "report" (runs/report_ask.py)
    kind: str = "spot"  # or "strip": how a location's image number maps to a slice
    region: str | None = None  # the manifest's body region, told to report cases


@dataclass(frozen=True)
class Outcome:
    job: CaseJob
    shown_at: datetime
    answered_at: datetime
    raw_reply: str | None
    meta: dict[str, Any]
    parsed: dict[str, Any]
    location_json: str | None = None  # reader_app.grounding.store's column text
    reasoning: str | None = None  # the model's reasoning text: stored, never shown to readers
