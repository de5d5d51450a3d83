"""The stored report rubric grades, read for analysis: ``rubric_frame`` and the tiers.

Apart from ``grading.rubric`` (the adjudicator's queue and grading, which
reaches the judges' HTTP client and the answer matcher): the leaderboard, the
exports and the static report read grades through this module only, so a page
that shows rubric scores imports none of that (docs/performance.md).
"""

from __future__ import annotations

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.core.errors import ReaderStudyError
from reader_app.grading.responders import responder_columns
from reader_app.models import Case, Response, RubricGrade, RubricJudgement
from reader_app.study.case_reports import report_case_ids
from scoring import RUBRIC_MAX as RUBRIC_MAX  # re-exported: the grading pages' bound
from scoring import TIERS, count_unjudged
from scoring import rubric_tier as scoring_tier

# (tier, lowest, highest), best first: SCORING.md section 6, from its one home in
# scoring.rubric, capitalised for display
RUBRIC_TIERS = tuple((name.capitalize(), low, high) for name, low, high in TIERS)
RUBRIC_COLUMNS = ["responder", "kind", "group", "case_id", "rubric"]
FABRICATION_COLUMNS = ["responder", "kind", "group", "case_id", "fabrication"]


class RubricError(ReaderStudyError, ValueError):
    """The grade cannot be stored; the message is meant for the adjudicator."""


def rubric_tier(score: int) -> str:
    """The tier of a 0..40 grade, capitalised for display (``scoring.rubric_tier``)."""
    try:
        return scoring_tier(score).capitalize()
    except ValueError as exc:
        raise RubricError(f"a rubric grade is a whole number 0..{RUBRIC_MAX}") from exc


def agreed_judgements(session: Session, study_id: int) -> dict[int, int]:
    """response id -> the judges' agreed score (active judgements only)."""
    rows = session.exec(
        select(RubricJudgement.response_id, RubricJudgement.score)
        .join(Response, col(Response.id) == RubricJudgement.response_id)
        .where(
            Response.study_id == study_id,
            col(RubricJudgement.active).is_(True),
            RubricJudgement.status == "agree",
        )
    ).all()
    return {rid: int(score) for rid, score in rows if score is not None}


def rubric_frame(*, session: Session, study_id: int) -> pd.DataFrame:
    """Active rubric grades, one row per graded report: responder, kind, group, case_id, rubric.

    A human grade where there is one, else the judges' agreed score.

    The same shape as the tidy frame's identity columns, for scoring's
    ``rubric_summary``. Like ``results.tidy_responses`` it is for analysis
    code; pages that show it check the role themselves.
    """
    rows = session.exec(
        select(RubricGrade.score, Response, Case.source_id)
        .join(Response, col(Response.id) == RubricGrade.response_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(Response.study_id == study_id, col(RubricGrade.active).is_(True))
        .order_by(col(Response.id))
    ).all()
    human = {resp.id for _, resp, _ in rows}
    agreed = agreed_judgements(session, study_id)
    judged = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(col(Response.id).in_([rid for rid in agreed if rid not in human]))
        .order_by(col(Response.id))
    ).all()
    rows = [*rows, *((agreed[resp.id or 0], resp, source_id) for resp, source_id in judged)]
    responder = responder_columns(session=session, study_id=study_id)
    records = []
    for score, resp, source_id in rows:
        records.append(
            {
                **responder(resp),
                "case_id": source_id,
                "rubric": int(score),
            }
        )
    frame = pd.DataFrame.from_records(records, columns=RUBRIC_COLUMNS)
    frame["rubric"] = frame["rubric"].astype("Int64")
    return frame


def report_score_frame(*, session: Session, study_id: int) -> tuple[pd.DataFrame, int]:
    """Bench 2's reading (``scoring.rubric.count_unjudged``): every responder who answered
    a report case, over every report case, a report that is "I don't know", failed,
    invalid or missing counted 0; with ``counted_as``. Returns (frame, reports still
    waiting for a score, left out)."""
    graded = rubric_frame(session=session, study_id=study_id)
    cases = report_case_ids(session=session, study_id=study_id)
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(
            Response.study_id == study_id,
            col(Case.practice).is_(False),
            col(Case.id).in_(cases or {-1}),
        )
        .order_by(col(Response.id))
    ).all()
    case_ids = session.exec(
        select(Case.source_id)
        .where(col(Case.id).in_(cases or {-1}), col(Case.practice).is_(False))
        .order_by(col(Case.position))
    ).all()
    responder = responder_columns(session=session, study_id=study_id)
    answers = pd.DataFrame.from_records(
        [{**responder(resp), "case_id": sid, "status": resp.status} for resp, sid in rows],
        columns=["responder", "kind", "group", "case_id", "status"],
    )
    scores = graded[["responder", "case_id", "rubric"]].drop_duplicates(["responder", "case_id"])
    frame = answers.merge(scores, on=["responder", "case_id"], how="left")
    return count_unjudged(frame, case_ids=list(case_ids))


def report_fabrication(session: Session, study_id: int) -> dict[int, bool | None]:
    """response id -> whether the judges found a fabricated finding (the active judgement's
    ``fabrication``: true when any judge did; None when the judges were not asked)."""
    rows = session.exec(
        select(RubricJudgement.response_id, RubricJudgement.fabrication)
        .join(Response, col(Response.id) == RubricJudgement.response_id)
        .where(Response.study_id == study_id, col(RubricJudgement.active).is_(True))
    ).all()
    return {rid: None if flag is None else bool(flag) for rid, flag in rows}


def fabrication_frame(*, session: Session, study_id: int) -> pd.DataFrame:
    """One row per judged report whose judges said whether it fabricates: responder,
    kind, group, case_id, fabrication (the input of ``scoring.fabrication_rates``)."""
    flags = {rid: f for rid, f in report_fabrication(session, study_id).items() if f is not None}
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(col(Response.id).in_(list(flags)))
        .order_by(col(Response.id))
    ).all()
    responder = responder_columns(session=session, study_id=study_id)
    records = [
        {**responder(resp), "case_id": source_id, "fabrication": flags[resp.id or 0]}
        for resp, source_id in rows
    ]
    frame = pd.DataFrame.from_records(records, columns=FABRICATION_COLUMNS)
    frame["fabrication"] = frame["fabrication"].astype("boolean")
    return frame
