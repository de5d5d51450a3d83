"""Which pages each role may open. Pages not listed for a role do not exist for it.

Role checks are also enforced in the service layer; hiding pages is convenience.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PAGES_DIR = Path(__file__).resolve().parent / "pages"


@dataclass(frozen=True)
class PageSpec:
    file: str
    title: str
    icon: str
    url_path: str


EXAM = PageSpec("exam.py", "Exam", "📝", "exam")
ADJUDICATE = PageSpec("adjudicate.py", "Adjudication", "⚖️", "adjudicate")
ANSWER_KEY = PageSpec("answer_key.py", "Answer key", "🔑", "answer-key")

ROLE_PAGES: dict[str, tuple[PageSpec, ...]] = {
    "reader": (EXAM,),
    "coordinator": (ANSWER_KEY,),
    "adjudicator": (ADJUDICATE,),
    "analyst": (),
}


def pages_for(role: str) -> tuple[PageSpec, ...]:
    return ROLE_PAGES.get(role, ())
