"""One case opened from the per-case matrix: its images, its reference and every answer.

For analysts and coordinators, who may see ground truth: the key's diagnosis and
synonyms, the clinical history, the stored PNGs in order and each responder's
answer with its confidence and verdict, humans and models alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.analysis.data import ANALYSIS_ROLES
from reader_app.core.auth import require_role
from reader_app.grading.key import case_key
from reader_app.models import Case, CaseImage, Reader

ANSWER_COLUMNS = ("responder", "kind", "group", "answer", "confidence", "verdict")
_VERDICT = {1: "correct", 0: "incorrect"}


@dataclass(frozen=True)
class CaseDetail:
    source_id: str
    kind: str
    history: str | None
    reference: str
    synonyms: tuple[str, ...]
    images: tuple[str, ...]  # sha256 of each stored PNG, in order
    answers: pd.DataFrame  # ANSWER_COLUMNS, one row per responder


def answers_to(frame: pd.DataFrame, source_id: str) -> pd.DataFrame:
    """Every responder's row of the tidy frame for one case, in words."""
    rows = frame[frame["case_id"].astype(str) == source_id]
    verdicts = [
        "I don't know"
        if status == "idk"
        else "pending"
        if pd.isna(correct)
        else _VERDICT[int(correct)]
        for status, correct in zip(rows["status"], rows["correct"], strict=True)
    ]
    out = pd.DataFrame(
        {
            "responder": rows["responder"].astype(str),
            "kind": rows["kind"].astype(str),
            "group": rows["group"].fillna("").astype(str),
            "answer": [
                "" if pd.isna(d) or s == "idk" else str(d)
                for d, s in zip(rows["diagnosis"], rows["status"], strict=True)
            ],
            "confidence": ["" if pd.isna(v) else str(int(v)) for v in rows["likert"]],
            "verdict": verdicts,
        },
        columns=list(ANSWER_COLUMNS),
    )
    return out.sort_values(["kind", "responder"], kind="stable").reset_index(drop=True)


def case_detail(
    *, session: Session, actor: Reader, frame: pd.DataFrame, source_id: str
) -> CaseDetail | None:
    """The case with manifest id ``source_id`` in the actor's study (None if absent)."""
    require_role(actor, *ANALYSIS_ROLES)
    case = session.exec(
        select(Case).where(Case.study_id == actor.study_id, Case.source_id == source_id)
    ).first()
    if case is None or case.id is None:
        return None
    images = session.exec(
        select(CaseImage.sha256).where(CaseImage.case_id == case.id).order_by(col(CaseImage.seq))
    ).all()
    entry = case_key(session=session, case_id=case.id)
    return CaseDetail(
        source_id=case.source_id,
        kind=case.kind,
        history=case.history,
        reference=entry.diagnosis if entry else "",
        synonyms=entry.synonyms if entry else (),
        images=tuple(images),
        answers=answers_to(frame, source_id),
    )
