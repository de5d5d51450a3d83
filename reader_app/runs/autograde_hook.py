"""After a run or an import, grade what the answer key and grade memory can grade.

New model answers then flow into the same grading as human ones: exact key
matches and remembered verdicts are applied now, and the rest waits in the
adjudication queue (or for the LLM judges).
"""

from __future__ import annotations

from sqlmodel import Session

from reader_app.grading.autograde import autograde_study


def autograde_after_run(*, session: Session, study_id: int, actor: str) -> str:
    """Run the study-level autograde; a one-line report of where the verdicts come from."""
    report = autograde_study(session=session, study_id=study_id, actor=actor, commit=True)
    parts = {
        "by key": report.by_key,
        "by adjudicator": report.by_adjudicator,
        "by judge": report.by_judge,
        "by import": report.by_import,
        "pending": report.pending,
    }
    return "grading: answered responses " + ", ".join(f"{k} {v}" for k, v in parts.items())
