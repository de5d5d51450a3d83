"""After a run or an import, grade what the answer key and grade memory can grade.

New model answers then flow into the same grading as human ones: exact key
matches and remembered verdicts are applied now, and the rest waits in the
adjudication queue (or for the LLM judges).
"""

from __future__ import annotations

import importlib
from typing import Any

from sqlmodel import Session


def autograde_after_run(*, session: Session, study_id: int, actor: str) -> str:
    """Run the study-level autograde; a one-line report (or why it did not run)."""
    try:
        module = importlib.import_module("reader_app.grading.autograde")
        autograde: Any = module.autograde_study
    except (ImportError, AttributeError):
        return "grading: autograde is not available in this build; grade later"
    report = autograde(session=session, study_id=study_id, actor=actor, commit=True)
    parts = [
        f"{name} {getattr(report, name)}"
        for name in ("by_key", "by_adjudicator", "by_judge", "by_import", "pending")
        if hasattr(report, name)
    ]
    return "grading: answered responses " + ", ".join(parts).replace("_", " ")
