"""Database rows -> the tidy frame of SCORING.md section 1, one row per (responder, case).

Humans and model runs come out of the same table in the same shape; the
verdict comes from grade memory (case, normalized answer), so identical
answers share one verdict whoever gave them. Practice answers never appear.
"""

from __future__ import annotations

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, ModelRun, Reader, Response, Verdict

TIDY_COLUMNS = [
    "responder",
    "kind",
    "group",
    "case_id",
    "status",
    "diagnosis",
    "likert",
    "correct",
]


def verdict_map(*, session: Session, study_id: int) -> dict[tuple[int, str], int]:
    rows = session.exec(
        select(Verdict.case_id, Verdict.normalized_answer, Verdict.correct)
        .join(Case, col(Case.id) == Verdict.case_id)
        .where(Case.study_id == study_id, col(Verdict.active).is_(True))
    ).all()
    return {(case_id, norm): correct for case_id, norm, correct in rows}


def tidy_responses(*, session: Session, study_id: int) -> pd.DataFrame:
    """Every scored (non-practice) response of a study as the tidy frame."""
    verdicts = verdict_map(session=session, study_id=study_id)
    readers = {r.id: r for r in session.exec(select(Reader).where(Reader.study_id == study_id))}
    runs = {m.id: m for m in session.exec(select(ModelRun).where(ModelRun.study_id == study_id))}
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(Response.study_id == study_id, col(Response.practice).is_(False))
        .order_by(col(Response.id))
    ).all()
    records = []
    for resp, source_id in rows:
        if resp.reader_id is not None:
            who = readers[resp.reader_id]
            responder, kind, group = who.code, "human", who.group_name
        else:
            run = runs[resp.model_run_id]
            responder, kind, group = run.name, "model", run.group_name
        correct = None
        if resp.status == "answered":
            correct = verdicts.get((resp.case_id, normalize_answer(resp.diagnosis)))
        records.append(
            {
                "responder": responder,
                "kind": kind,
                "group": group,
                "case_id": source_id,
                "status": resp.status,
                "diagnosis": resp.diagnosis or "",
                "likert": resp.likert,
                "correct": correct,
            }
        )
    frame = pd.DataFrame.from_records(records, columns=TIDY_COLUMNS)
    frame["likert"] = frame["likert"].astype("Int64")
    frame["correct"] = frame["correct"].astype("Int64")
    return frame
