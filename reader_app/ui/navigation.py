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

ROLE_PAGES: dict[str, tuple[PageSpec, ...]] = {
    "reader": (EXAM,),
    "coordinator": (),
    "adjudicator": (),
    "analyst": (),
}


def pages_for(role: str) -> tuple[PageSpec, ...]:
    return ROLE_PAGES.get(role, ())
