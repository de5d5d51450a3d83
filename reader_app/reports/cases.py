"""A case's answer mode and reference report (table ``case_reports``).

The exam asks only ``answer_mode``; the reference report is read by grading
(the rubric queue and the judges) and never by anything a reader sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, col, select

from reader_app.models import Case, CaseReport
from reader_app.study.config import ANSWER_MODES

REPORT_FIELDS = ["findings", "impression"]


@dataclass(frozen=True)
class ReferenceReport:
    findings: str
    impression: str

    def text(self) -> str:
        return report_text(self.findings, self.impression)


def report_text(findings: str | None, impression: str | None) -> str:
    """One report as the judge reads it (the same for a reference and a candidate)."""
    return f"FINDINGS:\n{(findings or '').strip()}\n\nIMPRESSION:\n{(impression or '').strip()}"


def effective_mode(case_answer: str | None, study_default: str | None) -> str:
    mode = case_answer or study_default or "diagnosis"
    if mode not in ANSWER_MODES:
        raise ValueError(f"answer mode must be one of {ANSWER_MODES}, not {mode!r}")
    return mode


def missing_references(entries: list[tuple[str, str, str | None, str | None]]) -> list[str]:
    """(where, mode, findings, impression) rows -> a message per report case with no reference."""
    return [
        f"{where}, fields 'reference_findings'/'reference_impression': a report case needs "
        "a reference report (at least an impression)"
        for where, mode, findings, impression in entries
        if mode == "report" and not (impression or findings)
    ]


def store_case_report(
    *,
    session: Session,
    case: Case,
    mode: str,
    reference_findings: str | None,
    reference_impression: str | None,
) -> CaseReport | None:
    """Record a report case (or a reference given for a diagnosis case); flushes only."""
    if mode == "diagnosis" and not (reference_findings or reference_impression):
        return None
    assert case.id is not None
    row = CaseReport(
        case_id=case.id,
        answer=mode,
        reference_findings=reference_findings,
        reference_impression=reference_impression,
    )
    session.add(row)
    session.flush()
    return row


def answer_mode(*, session: Session, case_public_id: str) -> str:
    """``diagnosis`` or ``report``: the only thing the exam learns from case_reports."""
    mode = session.exec(
        select(CaseReport.answer)
        .join(Case, col(Case.id) == CaseReport.case_id)
        .where(Case.public_id == case_public_id)
    ).first()
    return mode or "diagnosis"


def report_case_ids(*, session: Session, study_id: int) -> set[int]:
    return set(
        session.exec(
            select(CaseReport.case_id)
            .join(Case, col(Case.id) == CaseReport.case_id)
            .where(Case.study_id == study_id, CaseReport.answer == "report")
        ).all()
    )


def reference_reports(*, session: Session, study_id: int) -> dict[int, ReferenceReport]:
    """case id -> reference report, for grading (never for a reader's page)."""
    rows = session.exec(
        select(CaseReport)
        .join(Case, col(Case.id) == CaseReport.case_id)
        .where(Case.study_id == study_id)
    ).all()
    return {
        r.case_id: ReferenceReport(r.reference_findings or "", r.reference_impression or "")
        for r in rows
        if r.reference_findings or r.reference_impression
    }
