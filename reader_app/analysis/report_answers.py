"""Every report answer of a study with its text and its grades: ``export --what reports``.

One row per non-practice response on a report case, judged or not (an "I don't
know" and a failure too): who, the case, the Findings and Impression exactly as
stored, the confidence, each judge's score, tier and reason under the active
judgement, the adjudicator's grade, the final score (the adjudicator's where
there is one, else the judgement's: one judge's score, or two judges' mean when
they agreed; blank while neither exists) and whether the judges found a
fabricated finding. The reference report is in its own columns only when asked
(the analyst's export).
"""

from __future__ import annotations

import json
from typing import Any, Final

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.grading.responders import responder_columns
from reader_app.grading.rubric_grades import report_fabrication, rubric_tier
from reader_app.models import Case, Response, RubricGrade, RubricJudgement
from reader_app.study.case_reports import reference_reports, report_case_ids

MIN_JUDGE_COLUMNS: Final = 2  # judge_1_*, judge_2_* always, so the file's shape is stable
ANSWER_COLUMNS: Final = (
    "responder",
    "kind",
    "group",
    "case_id",
    "status",
    "findings",
    "impression",
    "likert",
    "idk",
)
JUDGEMENT_COLUMNS: Final = ("judge_prompt", "judge_status", "judge_gap")
GRADE_COLUMNS: Final = ("adjudicated_score", "adjudicated_tier", "rubric", "tier", "fabrication")
REFERENCE_COLUMNS: Final = ("reference_findings", "reference_impression")


def judge_columns(n: int) -> list[str]:
    parts = ("", "_score", "_tier", "_reason")
    return [f"judge_{k}{part}" for k in range(1, n + 1) for part in parts]


def report_columns(n_judges: int, *, with_reference: bool) -> list[str]:
    return [
        *ANSWER_COLUMNS,
        *JUDGEMENT_COLUMNS,
        *judge_columns(n_judges),
        *GRADE_COLUMNS,
        *(REFERENCE_COLUMNS if with_reference else ()),
    ]


def _tier(score: int | None) -> str | None:
    return None if score is None else rubric_tier(int(score))


def report_answers_frame(*, session: Session, study_id: int, with_reference: bool) -> pd.DataFrame:
    """The rows of ``export --what reports``, in response order (see the module doc)."""
    report_cases = report_case_ids(session=session, study_id=study_id)
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(
            Response.study_id == study_id,
            col(Case.practice).is_(False),
            col(Case.id).in_(report_cases or {-1}),
        )
        .order_by(col(Response.id))
    ).all()
    ids = [r.id for r, _ in rows if r.id is not None]
    judgements = {
        j.response_id: j
        for j in session.exec(
            select(RubricJudgement).where(
                col(RubricJudgement.response_id).in_(ids or [-1]),
                col(RubricJudgement.active).is_(True),
            )
        ).all()
    }
    grades = {
        g.response_id: int(g.score)
        for g in session.exec(
            select(RubricGrade).where(
                col(RubricGrade.response_id).in_(ids or [-1]), col(RubricGrade.active).is_(True)
            )
        ).all()
    }
    judged = [_judges(j) for j in judgements.values()]
    n_judges = max([MIN_JUDGE_COLUMNS, *(len(j) for j in judged)])
    fabrication = report_fabrication(session, study_id)
    references = reference_reports(session=session, study_id=study_id) if with_reference else {}
    responder = responder_columns(session=session, study_id=study_id)
    records = []
    for resp, source_id in rows:
        assert resp.id is not None
        judgement = judgements.get(resp.id)
        agreed = judgement.score if judgement is not None and judgement.status == "agree" else None
        human = grades.get(resp.id)
        final = human if human is not None else agreed
        record: dict[str, Any] = {
            **responder(resp),
            "case_id": source_id,
            "status": resp.status,
            "findings": resp.findings,
            "impression": resp.impression,
            "likert": resp.likert,
            "idk": bool(resp.idk),
            "judge_prompt": judgement.prompt_version if judgement else None,
            "judge_status": judgement.status if judgement else None,
            "judge_gap": judgement.gap if judgement else None,
            "adjudicated_score": human,
            "adjudicated_tier": _tier(human),
            "rubric": final,
            "tier": _tier(final),
            "fabrication": fabrication.get(resp.id),
        }
        named = _judges(judgement) if judgement else []
        for k in range(1, n_judges + 1):
            label, score, reason = named[k - 1] if k <= len(named) else (None, None, None)
            record[f"judge_{k}"] = label
            record[f"judge_{k}_score"] = score
            record[f"judge_{k}_tier"] = _tier(score)
            record[f"judge_{k}_reason"] = reason
        if with_reference:
            ref = references.get(resp.case_id)
            record["reference_findings"] = ref.findings if ref else None
            record["reference_impression"] = ref.impression if ref else None
        records.append(record)
    frame = pd.DataFrame.from_records(
        records, columns=report_columns(n_judges, with_reference=with_reference)
    )
    for name in ("likert", "judge_gap", "adjudicated_score", "rubric", *_score_columns(n_judges)):
        frame[name] = frame[name].astype("Int64")
    frame["fabrication"] = frame["fabrication"].astype("boolean")
    return frame


def _score_columns(n: int) -> list[str]:
    return [f"judge_{k}_score" for k in range(1, n + 1)]


def _judges(judgement: RubricJudgement) -> list[tuple[str, int | None, str | None]]:
    """(judge label, score or None, reason or None) per judge, in the judgement's order;
    a judgement stored before the reasons were kept has no reasons."""
    labels = judgement.judges.split("+") if judgement.judges else []
    scores = json.loads(judgement.scores_json or "[]")
    reasons = json.loads(judgement.reasons_json) if judgement.reasons_json else []
    reasons += [None] * (len(labels) - len(reasons))
    return [
        (label, None if score is None else int(score), reason)
        for label, score, reason in zip(labels, scores, reasons, strict=False)
    ]
