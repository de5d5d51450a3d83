"""A reader's report answer (Findings + Impression).

``validate_report`` checks what the report form sent; ``submit_report`` stores
it through the exam's one ``store_response`` (the same case lookup, open-study
check, timing columns and duplicate handling as a diagnosis), so it is durable
before the next case shows and a second submit of the same case is a
duplicate. Drafts are kept by the server, as for the diagnosis form
(exam/drafts.py), and deleted by that store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from reader_app.core.text_rules.answers import forbidden_characters
from reader_app.exam.submit import (
    AnswerColumns,
    AnswerError,
    SubmitResult,
    checked_likert,
    store_response,
)
from reader_app.models import Reader

MAX_REPORT_CHARS = 8000  # per field; a Bench 2 report is a few hundred words


@dataclass(frozen=True)
class ReportAnswer:
    findings: str | None
    impression: str | None
    likert: int | None
    idk: bool

    @property
    def status(self) -> str:
        return "idk" if self.idk else "answered"


def _clean(label: str, text: str | None) -> str:
    value = (text or "").strip()
    if len(value) > MAX_REPORT_CHARS:
        raise AnswerError(f"Keep the {label} to {MAX_REPORT_CHARS} characters.", field=label)
    if forbidden_characters(
        value
    ):  # reader_app.core.text_rules.answers: the same rule as for models
        raise AnswerError(f"The {label} contains control characters; please retype them.")
    return value


def validate_report(
    findings: str | None, impression: str | None, likert: int | None, idk: bool
) -> ReportAnswer:
    """IDK carries nothing else; otherwise an impression and a confidence are needed."""
    if idk:
        return ReportAnswer(None, None, None, True)
    found = _clean("findings", findings)
    impr = _clean("impression", impression)
    if not impr:
        raise AnswerError("Write an impression, or choose “I don't know”.", field="impression")
    return ReportAnswer(found or None, impr, checked_likert(likert), False)


def submit_report(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    answer: ReportAnswer,
    shown_at: datetime | None,
    image_sha256: list[str],
    meta: dict[str, object] | None = None,
    interaction: dict[str, object] | None = None,
    active_ms: int | None = None,
    location_json: str | None = None,
    arm: str = "unaided",
    aid_run_id: int | None = None,
) -> SubmitResult:
    """Commit one report response; a second submit of the same case is a duplicate.
    ``arm`` and ``aid_run_id`` as in ``exam.submit.store_response`` (AI-aided studies)."""
    if answer != validate_report(answer.findings, answer.impression, answer.likert, answer.idk):
        raise AnswerError("This report is not valid: use validate_report() to build it.")
    return store_response(
        session=session,
        reader=reader,
        case_public_id=case_public_id,
        columns=AnswerColumns(
            status=answer.status,
            likert=answer.likert,
            idk=answer.idk,
            findings=answer.findings,
            impression=answer.impression,
            location_json=location_json,
        ),
        shown_at=shown_at,
        image_sha256=image_sha256,
        meta=meta,
        interaction=interaction,
        active_ms=active_ms,
        arm=arm,
        aid_run_id=aid_run_id,
    )
