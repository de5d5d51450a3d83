"""docs/bench2.md's walk-through: the stand-ins for its models, judges and two readers.

``respond`` answers as the doc's stub server did: a report model writes "A dense focus
in the right lung." (grouped: one such part per Entry/Upper/Lower/Exit group), and a
judge scores a candidate report by the reference it is framed with and a marker in the
candidate's text (``SCORES``: judge-a's and judge-b's score). ``submit_reader_reports``
stores R01's and R02's reports through the exam's own report service, as a reader's
Submit does. Nothing here is a real model or judge.
"""

from __future__ import annotations

import json

from sqlmodel import Session, select

from reader_app.exam.order import ensure_order
from reader_app.exam.report_submit import submit_report, validate_report
from reader_app.models import Case, Reader, Study
from tests.support.openai_stub import ChatRequest, Reply

# a phrase of each toy case's reference report (docs/bench2.md, step 0) -> the case
REFERENCES = {"air bronchograms": "ct-001", "16 mm": "ct-002", "small effusion": "ct-003"}
# (marker in the candidate report, case) -> (judge-a's score, judge-b's score)
SCORES = {
    ("Entry:", "ct-001"): (8, 9),  # the grouped model (open-vlm-4x4): agree, 9 (8.5 up)
    ("Entry:", "ct-002"): (23, 34),  # 11 apart: split, to the Reports queue
    ("Entry:", "ct-003"): (37, 38),
    ("dense focus", "ct-001"): (20, 22),  # the one-request model (frontier-vlm)
    ("dense focus", "ct-002"): (10, 30),
    ("dense focus", "ct-003"): (15, 35),
    ("Patchy consolidation", "ct-001"): (27, 27),  # R01
    ("Nodular opacity", "ct-002"): (11, 11),
    ("Lobar consolidation", "ct-003"): (22, 22),
    ("Air-space disease", "ct-001"): (25, 25),  # R02 (and "I don't know" on ct-003)
    ("16 mm nodule", "ct-002"): (33, 33),
}
GROUPS = ("Entry", "Upper", "Lower", "Exit")
# reader -> case -> (findings, impression, Likert), or None for "I don't know"
READER_REPORTS: dict[str, dict[str, tuple[str, str, int] | None]] = {
    "R01": {
        "ct-001": ("Patchy consolidation, right lower lobe.", "Right lower lobe pneumonia.", 3),
        "ct-002": ("Nodular opacity in the right lung.", "Right lung nodule.", 2),
        "ct-003": ("Lobar consolidation on the right.", "Right pneumonia.", 3),
    },
    "R02": {
        "ct-001": ("Air-space disease of the right lower lobe.", "Right lower lobe pneumonia.", 4),
        "ct-002": ("Smooth 16 mm nodule in the right lower lobe.", "Solitary 16 mm nodule.", 3),
        "ct-003": None,
    },
}  # fmt: skip


def respond(request: ChatRequest) -> Reply:
    text = request.text
    if request.model.startswith("judge"):
        reference, candidate = text.split("<<<candidate", 1)
        case = next(c for phrase, c in REFERENCES.items() if phrase in reference)
        marker = next(m for (m, c) in SCORES if c == case and m in candidate)
        a, b = SCORES[(marker, case)]
        score = a if request.model == "judge-a" else b
        reply = {"core_finding": "right lower lobe", "score": score, "fabrication": False}
        return Reply(json.dumps({**reply, "reason": f"{request.model}: {marker}"}))
    group = next((g for g in GROUPS if f"These are the {g} slices" in text), None)
    if group:
        part = {"findings": f"{group}: a dense focus in the right lung."}
        return Reply(json.dumps({**part, "impression": f"{group}: right lung opacity."}))
    report = {"findings": "A dense focus in the right lung."}
    return Reply(json.dumps({**report, "impression": "Right lower lobe opacity."}))


def submit_reader_reports(session: Session, slug: str) -> None:
    """R01's three reports and R02's two plus an "I don't know", readers already invited."""
    study = session.exec(select(Study).where(Study.slug == slug)).one()
    for code, reports in READER_REPORTS.items():
        reader = session.exec(
            select(Reader).where(Reader.study_id == study.id, Reader.code == code)
        ).one()
        ensure_order(session=session, reader=reader)
        for source_id, report in reports.items():
            case = session.exec(
                select(Case).where(Case.study_id == study.id, Case.source_id == source_id)
            ).one()
            answer = (
                validate_report(None, None, None, True)
                if report is None
                else validate_report(*report, False)
            )
            submit_report(
                session=session,
                reader=reader,
                case_public_id=case.public_id,
                answer=answer,
                shown_at=None,
                image_sha256=[],
            )
