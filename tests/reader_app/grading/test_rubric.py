"""Report rubric grades (0-40): blinded queue, supersede with history, frame for scoring."""

from __future__ import annotations

import dataclasses

import pytest
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.grading.rubric import RubricItem, record_rubric_grade, rubric_queue
from reader_app.grading.rubric_grades import RubricError, rubric_frame, rubric_tier
from reader_app.models import RubricGrade
from tests.reader_app.grading.helpers import (
    answer,
    case_by_source,
    make_key_study,
    model_run,
    reader,
)

REPORTS = {"report_fields": ["findings", "impression"]}
CT_KEY = [("ct-01", "Right lower lobe pneumonia", []), ("ct-02", "Pulmonary embolism", [])]


def test_tiers_follow_scoring_section_6() -> None:
    assert [rubric_tier(s) for s in (40, 38, 37, 32, 31, 24, 23, 16, 15, 8, 7, 0)] == [
        "Exceptional", "Exceptional", "Strong", "Strong", "Solid", "Solid",
        "Mixed", "Mixed", "Poor", "Poor", "Fail", "Fail",
    ]  # fmt: skip
    with pytest.raises(RubricError):
        rubric_tier(41)


def test_rubric_item_has_no_responder_field() -> None:
    names = {f.name for f in dataclasses.fields(RubricItem)}
    assert not names & {"responder", "reader_id", "model_run_id", "kind", "group", "response_id"}


def test_grade_reports_and_return_them_for_scoring(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir, config=REPORTS, key=CT_KEY, kind="strip")
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01", group="PGY2")
    run = model_run(session, study, "ct-run")
    ct1, ct2 = case_by_source(session, study, "ct-01"), case_by_source(session, study, "ct-02")
    answer(
        session,
        study,
        ct1,
        "Pneumonia",
        by=r1,
        findings="RLL consolidation.",
        impression="RLL pneumonia.",
    )
    answer(session, study, ct1, "Pneumonia", by=run, findings="Consolidation.", impression=None)
    answer(session, study, ct2, "Normal", by=r1)  # no report text: not in the rubric queue

    view = rubric_queue(session=session, adjudicator=adj)
    assert view.size == 2 and view.item is not None
    assert view.item.reference == "Right lower lobe pneumonia"
    assert view.item.case_public_id == ct1.public_id and view.item.case_kind == "strip"
    assert "R01" not in repr(view.item) and "ct-run" not in repr(view.item)
    scores = {"RLL consolidation.": 34, "Consolidation.": 18}
    while (view := rubric_queue(session=session, adjudicator=adj)).item is not None:
        record_rubric_grade(
            session=session,
            adjudicator=adj,
            item_id=view.item.item_id,
            score=scores[view.item.findings],
        )
    frame = rubric_frame(session=session, study_id=study.id or 0)
    got = sorted(
        zip(frame["responder"], frame["kind"], frame["case_id"], frame["rubric"], strict=True)
    )
    assert got == [("R01", "human", "ct-01", 34), ("ct-run", "model", "ct-01", 18)]
    summary = pytest.importorskip("scoring.rubric").rubric_summary(frame)
    assert sorted(summary["total"].tolist()) == [18, 34]


def test_regrade_supersedes_and_keeps_history(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir, config=REPORTS, key=CT_KEY, kind="strip")
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01")
    ct1 = case_by_source(session, study, "ct-01")
    answer(session, study, ct1, "Pneumonia", by=r1, impression="Pneumonia.")
    item = rubric_queue(session=session, adjudicator=adj).item
    assert item is not None
    record_rubric_grade(session=session, adjudicator=adj, item_id=item.item_id, score=20)
    record_rubric_grade(session=session, adjudicator=adj, item_id=item.item_id, score=26, note="x")
    grades = session.exec(select(RubricGrade).order_by(col(RubricGrade.id))).all()
    assert [(g.score, g.active) for g in grades] == [(20, False), (26, True)]
    assert rubric_frame(session=session, study_id=study.id or 0)["rubric"].tolist() == [26]
    for bad in (41, -1, 2.5, True):
        with pytest.raises(RubricError):
            record_rubric_grade(session=session, adjudicator=adj, item_id=item.item_id, score=bad)  # type: ignore[arg-type]
    with pytest.raises(AuthError):
        record_rubric_grade(session=session, adjudicator=r1, item_id=item.item_id, score=10)


def test_rubric_is_off_unless_the_study_collects_reports(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir, key=CT_KEY)
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01")
    answer(session, study, case_by_source(session, study, "ct-01"), "x", by=r1, findings="y")
    assert rubric_queue(session=session, adjudicator=adj).size == 0
    with pytest.raises(RubricError, match="reports"):
        record_rubric_grade(session=session, adjudicator=adj, item_id="nope", score=10)
