"""A case opened from the per-case matrix: images, key and every answer, in words."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from reader_app.analysis.case_detail import ANSWER_COLUMNS, case_detail
from reader_app.analysis.data import study_data
from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

CASES = ["case-000", "case-001"]


def test_every_answer_with_its_confidence_and_verdict(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, history="cough")
    simulate_reader(session, study, "R01", plan_for(CASES, "Cw"))  # right at L4; wrong at L1
    simulate_reader(session, study, "R02", plan_for(CASES, "II"))  # I don't know twice
    import_model_run(session, study, "vlm", plan_for(CASES, "Wc"))  # wrong at L4; right at L1
    grade_everything(session, study)
    analyst = make_reader(session, study, code="AN1", role="analyst").reader
    frame = study_data(session=session, study=study).frame

    detail = case_detail(session=session, actor=analyst, frame=frame, source_id="case-000")
    assert detail is not None
    assert detail.source_id == "case-000" and detail.history == "cough"
    assert detail.reference and len(detail.images) == 1 and len(detail.images[0]) == 64
    answers = detail.answers
    assert tuple(answers.columns) == ANSWER_COLUMNS
    rows = {r.responder: (r.kind, r.confidence, r.verdict) for r in answers.itertuples()}
    assert rows == {
        "R01": ("human", "4", "correct"),
        "R02": ("human", "", "I don't know"),
        "vlm": ("model", "4", "incorrect"),
    }
    assert answers.loc[answers["responder"] == "R01", "answer"].item() == detail.reference
    assert case_detail(session=session, actor=analyst, frame=frame, source_id="nope") is None
    reader = make_reader(session, study, code="R09").reader
    with pytest.raises(AuthError):
        case_detail(session=session, actor=reader, frame=frame, source_id="case-000")
