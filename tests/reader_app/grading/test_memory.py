"""Grade memory: key first, one verdict per (case, normalized answer), shared by all."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from reader_app.core.settings import Settings
from reader_app.grading.adjudication import decide
from reader_app.grading.autograde import autograde_study
from reader_app.grading.memory import ConcurrentDecision, active_verdict, record_verdict
from reader_app.grading.queue import adjudication_queue
from reader_app.models import Verdict
from reader_app.results import tidy_responses
from tests.reader_app.grading.helpers import (
    answer,
    case_by_source,
    make_key_study,
    model_run,
    reader,
)


def _correct_by_responder(session: Session, study_id: int) -> dict[tuple[str, str], int | None]:
    frame = tidy_responses(session=session, study_id=study_id)
    return {
        (r, c): None if pd.isna(v) else int(v)
        for r, c, v in zip(frame["responder"], frame["case_id"], frame["correct"], strict=True)
    }


def test_benchmark_pairs_through_the_study(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir)
    r1 = reader(session, study, "R01")
    bone = case_by_source(session, study, "bone-01")
    chest = case_by_source(session, study, "chest-02")
    neuro = case_by_source(session, study, "neuro-03")
    answer(session, study, bone, "Osteopoikilosis", by=r1)
    answer(session, study, chest, "Pectus carinatum", by=r1)
    answer(session, study, neuro, "Complete agenesis of corpus callosum", by=r1)
    report = autograde_study(session=session, study_id=study.id or 0)
    assert (report.by_key, report.pending, report.pending_items) == (1, 2, 2)
    got = _correct_by_responder(session, study.id or 0)
    assert got[("R01", "bone-01")] == 1
    assert got[("R01", "chest-02")] is None  # never auto-correct: waits for a human
    assert got[("R01", "neuro-03")] is None
    assert (
        active_verdict(
            session=session, case_id=bone.id or 0, normalized_answer="osteopoikilosis"
        ).source
        == "key"
    )  # type: ignore[union-attr]


def test_same_answer_from_reader_and_model_shares_one_verdict(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01", group="PGY2")
    run = model_run(session, study, "gpt-run-1")
    chest = case_by_source(session, study, "chest-02")
    answer(session, study, chest, "Pectus carinatum", by=r1, likert=4)
    answer(session, study, chest, "pectus  carinatum.", by=run, likert=2)

    view = adjudication_queue(session=session, adjudicator=adj)
    assert view.size == 1  # one item for both answers
    assert view.item is not None and view.item.candidate in (
        "Pectus carinatum",
        "pectus carinatum.",
    )
    result = decide(session=session, adjudicator=adj, item_id=view.item.item_id, correct=False)
    assert result.final and result.responses_affected == 2

    frame = tidy_responses(session=session, study_id=study.id or 0)
    assert sorted(zip(frame["kind"], frame["correct"].astype(int), strict=True)) == [
        ("human", 0),
        ("model", 0),
    ]
    # a later identical answer, from anyone, reuses it: no new queue item
    run2 = model_run(session, study, "other-run")
    answer(session, study, chest, "PECTUS CARINATUM", by=run2)
    report = autograde_study(session=session, study_id=study.id or 0)
    assert report.by_adjudicator == 3 and report.pending == 0
    assert adjudication_queue(session=session, adjudicator=adj).size == 0


def test_idk_failure_and_practice_are_not_graded(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir)
    r1, r2 = reader(session, study, "R01"), reader(session, study, "R02")
    run = model_run(session, study, "run")
    bone = case_by_source(session, study, "bone-01")
    answer(session, study, bone, None, by=r1, status="idk")
    answer(session, study, bone, "PARSE_FAILED", by=run, status="failure", likert=None)
    answer(session, study, bone, "Osteopoikilosis", by=r2, likert=None, status="invalid")
    report = autograde_study(session=session, study_id=study.id or 0)
    assert report.total == 0 and report.new_key_verdicts == 0


def test_one_active_verdict_per_answer_is_a_database_rule(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    bone = case_by_source(session, study, "bone-01")
    first = record_verdict(
        session=session,
        study_id=study.id or 0,
        case_id=bone.id or 0,
        normalized_answer="melorheostosis",
        correct=0,
        source="adjudicator",
        decided_by="A01",
    )
    session.commit()
    second = record_verdict(
        session=session,
        study_id=study.id or 0,
        case_id=bone.id or 0,
        normalized_answer="melorheostosis",
        correct=1,
        source="adjudicator",
        decided_by="A02",
    )
    session.commit()
    session.refresh(first)
    assert not first.active and second.active
    # a raw second active row (what a racing writer would do) is refused
    session.add(
        Verdict(
            case_id=bone.id or 0,
            normalized_answer="melorheostosis",
            correct=0,
            source="adjudicator",
            active=True,
        )
    )
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_concurrent_verdict_is_reported_not_duplicated(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    bone = case_by_source(session, study, "bone-01")
    kwargs = dict(
        study_id=study.id or 0,
        case_id=bone.id or 0,
        normalized_answer="bone island",
        source="adjudicator",
    )
    with Session(session.get_bind()) as other:
        # both sessions saw no verdict; the other one commits first
        record_verdict(session=other, correct=1, decided_by="A02", **kwargs)  # type: ignore[arg-type]
        other.commit()
    session.add(
        Verdict(
            case_id=bone.id or 0,
            normalized_answer="placeholder",
            correct=0,
            source="adjudicator",
        )
    )
    session.flush()
    from unittest import mock

    with (
        mock.patch("reader_app.grading.memory.active_verdict", return_value=None),
        pytest.raises(ConcurrentDecision),
    ):
        record_verdict(session=session, correct=0, decided_by="A01", **kwargs)  # type: ignore[arg-type]
    session.commit()  # the outer transaction survives the failed savepoint
    assert (
        active_verdict(
            session=session, case_id=bone.id or 0, normalized_answer="bone island"
        ).decided_by
        == "A02"
    )  # type: ignore[union-attr]
