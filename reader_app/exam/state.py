"""What the exam keeps between page runs of one browser session: one typed object.

The exam page holds one :class:`ExamState` in its session (``ui/components/exam_session.py``)
instead of a dozen loose keys: the reader's order, the case on screen and its clocks,
pauses, practice feedback, the case being revised, the message to show and the form's
last refusal. A refused sign-in or a sign-out drops it with the rest of the session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from reader_app.exam.next_case import CaseView
from reader_app.exam.order import OrderSummary
from reader_app.exam.revisions import StoredAnswer
from reader_app.study.config import StudyConfig


@dataclass(frozen=True)
class NextUp:
    """The case after the one on screen, as its panel holds it (decoded, ready)."""

    case: CaseView
    window: str  # the window it opens on


@dataclass
class ExamState:
    order: OrderSummary | None = None  # the order's shape, read once per session
    config: StudyConfig | None = None
    case: CaseView | None = None  # the case on screen (None: the next one is looked up)
    shown_at: datetime | None = None  # when this session first drew it
    first_shown_at: datetime | None = None  # when the reader was first ever shown it
    paused_s: float = 0.0  # seconds paused on this case
    paused_at: float | None = None  # time.monotonic() of the pause in progress
    windows_seen: set[str] = field(default_factory=set)  # the window the case opened on
    from_slot: int = 0  # the slot after the last one answered: the next case's hint
    feedback: CaseView | None = None  # a practice case whose reference is shown now
    review: int | None = None  # the slot whose earlier answer is being changed
    review_limit: int | None = None
    review_answer: StoredAnswer | None = None
    notice: str | None = None  # said once, at the next run
    form_error: str | None = None  # the panel's last refusal, above Submit
    form_error_field: str | None = None
    attempt: int = 0  # submits handled: a refusal repeated word for word still reaches the panel
    following: NextUp | None = None  # the case the panel shows once the answer is stored
    answer_modes: dict[str, str] = field(default_factory=dict)  # public id -> its answer mode
    # the exam door (web/exam_door.py) commits from a server thread, the page from its own
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def start_case(self, case: CaseView, now: datetime, opening_window: str) -> None:
        """A case drawn for the first time in this session: fresh clocks and form."""
        self.case = case
        self.shown_at = now
        self.first_shown_at = None
        self.paused_s = 0.0
        self.windows_seen = {opening_window}
        self.refuse(None)

    def answer_mode(self, public_id: str, read: Callable[[], str]) -> str:
        """The case's answer mode ("diagnosis" or "report"): ``read`` once per case and
        session (it is fixed at import)."""
        mode = self.answer_modes.get(public_id)
        if mode is None:
            mode = self.answer_modes[public_id] = read()
        return mode

    def refuse(self, message: str | None, field_name: str | None = None) -> None:
        """Show ``message`` above Submit (about ``field_name``), or clear it."""
        self.form_error = message
        self.form_error_field = field_name if message else None

    @property
    def paused(self) -> bool:
        return self.paused_at is not None

    def start_pause(self) -> None:
        self.paused_at = time.monotonic()

    def end_pause(self) -> None:
        if self.paused_at is not None:
            self.paused_s += time.monotonic() - self.paused_at
            self.paused_at = None
