"""The AI-aided arm in the tidy frame and the exports, on SQLite and PostgreSQL: both rows
of a case, ``arm`` and ``aid_run``, the switch per case, and the score's ``aid`` list."""

from __future__ import annotations

import io

import pandas as pd
from sqlmodel import Session, select

from reader_app.analysis.data import study_data
from reader_app.analysis.exports import export_bytes
from reader_app.core.settings import Settings
from reader_app.exam import aid
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.grading.autograde import autograde_study
from reader_app.grading.memory import record_verdict
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, Study
from reader_app.results import tidy_responses
from scoring import ScoringParams, score_with_aid
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import SEQUENTIAL, add_run


def aided_study(session: Session, settings: Settings) -> Study:
    """Two cases; the run answers "Model says <case>" (wrong) at L4 on each. The reader
    answers both right unaided (the key's diagnosis), then takes the model's wrong
    answer on the first case shown (harmful switch) and keeps the second (no switch)."""
    study = make_study(session, settings.asset_dir, n_cases=2, config=SEQUENTIAL)
    add_run(session, study)
    reader = make_reader(session, study, ready=True, group="PGY2").reader
    ensure_order(session=session, reader=reader)
    for step in range(2):
        case = next_case(session=session, reader=reader)
        assert case is not None
        source = session.exec(select(Case).where(Case.public_id == case.public_id)).one()
        key = f"Diagnosis number {source.position}"
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=validate_answer(key, 2, False),
            shown_at=None,
            image_sha256=case.reader_sha256,
        )
        final = f"Model says {source.source_id}" if step == 0 else key
        aid.submit_aided(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=validate_answer(final, 4 if step == 0 else 3, False),
            shown_at=None,
            image_sha256=case.reader_sha256,
        )
    assert study.id is not None
    autograde_study(session=session, study_id=study.id)
    for case in session.exec(select(Case).where(Case.study_id == study.id)).all():
        assert case.id is not None
        record_verdict(
            session=session,
            study_id=study.id,
            case_id=case.id,
            normalized_answer=normalize_answer(f"Model says {case.source_id}"),
            correct=0,
            source="adjudicator",
            decided_by="test",
        )
    session.commit()
    return study


def test_the_tidy_frame_holds_both_rows_with_arm_and_run(
    session: Session, settings: Settings
) -> None:
    study = aided_study(session, settings)
    assert study.id is not None
    frame = tidy_responses(session=session, study_id=study.id)
    humans = frame[frame["kind"] == "human"]
    assert sorted(humans["arm"]) == ["aided", "aided", "unaided", "unaided"]
    assert set(humans.loc[humans["arm"] == "aided", "aid_run"]) == {"gpt-x"}
    assert humans["correct"].tolist().count(1) == 3  # two unaided + the kept one
    report = score_with_aid(frame, ScoringParams(n_boot=0))
    (entry, pool) = report["aid"]
    # at risk: both cases (model wrong, reader right unaided); given up on one -> 1/2;
    # net benefit (1 aided correct - 2 unaided correct) / 2 = -1/2
    assert (entry["responder"], entry["harmful_switch_rate"], entry["net_benefit"]) == (
        "R01",
        0.5,
        -0.5,
    )
    assert pool["harmful_switch_rate"] == 0.5 and pool["n_aided_cases"] == 2
    # the analysts' data keeps one row per (responder, case) in ``frame``, aided beside it
    data = study_data(session=session, study=study)
    assert len(data.frame[data.frame["kind"] == "human"]) == 2
    assert data.aided_frame is not None and len(data.aided_frame) == 2


def test_the_exports_hold_both_rows_and_the_switch_per_case(
    session: Session, settings: Settings
) -> None:
    study = aided_study(session, settings)
    responses = pd.read_csv(
        io.BytesIO(export_bytes("responses", "csv", session=session, study=study)), dtype=str
    )
    human = responses[responses["kind"] == "human"]
    assert len(human) == 4 and set(human["arm"]) == {"unaided", "aided"}
    # each row keeps its own times (matched on the arm too)
    assert human["submitted_at"].notna().all()
    assert human.groupby("case_id")["submitted_at"].nunique().eq(2).all()
    switches = pd.read_csv(
        io.BytesIO(export_bytes("aid", "csv", session=session, study=study)), dtype=str
    )
    assert sorted(switches["switch"]) == ["harmful", "kept_correct"]
    assert set(switches["aid_run"]) == {"gpt-x"} and set(switches["model_likert"]) == {"4"}
    assert "param_scoring_spec_version" in switches.columns


def test_progress_counts_an_aided_case_once(session: Session, settings: Settings) -> None:
    from reader_app.analysis.coordinator import reader_progress

    study = aided_study(session, settings)
    coordinator = make_reader(session, study, code="C1", role="coordinator").reader
    progress = reader_progress(session=session, actor=coordinator)
    row = progress[progress.iloc[:, 0] == "R01"].iloc[0].to_dict()
    assert 2 in row.values() and 4 not in row.values(), row  # 2 cases answered, not 4 rows
    assert "finished" in row.values()
