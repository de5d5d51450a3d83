"""The one builder of ``responses`` rows (reader_app/responses.py), on SQLite and PostgreSQL.

The exam, the model runner and the file importer all build their rows with
``fill_response``; their own tests (tests/reader_app/exam, runs) check each site's values.
Here: the shared rules themselves, stored and read back.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.core.text_rules.answers import RAW_ENCODING_KEY, recover_raw
from reader_app.models import Case, ModelRun, Response
from reader_app.responses import Responder, fill_response
from tests.factories import make_reader, make_study


def test_a_readers_row_gets_the_shared_columns_by_the_one_set_of_rules(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    case = session.exec(select(Case)).one()
    shown = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert study.id is not None and case.id is not None
    row = fill_response(
        None,
        study_id=study.id,
        case_id=case.id,
        responder=Responder(reader_id=reader.id),
        status="idk",
        image_sha256=["a" * 64, "b" * 64],
        shown_at=shown,
        practice=True,
        meta={"z": 1, "a": 2},
        interaction={"zoom_used": True, "max_zoom": 1.5},
    )
    session.add(row)
    session.commit()
    session.expire_all()
    got = session.exec(select(Response)).one()
    # idk follows the status; the images ','-joined in their order; the meta as sorted JSON
    assert (got.status, got.idk, got.diagnosis, got.likert) == ("idk", True, None, None)
    assert got.image_sha256 == "a" * 64 + "," + "b" * 64
    assert got.meta_json == '{"a": 2, "z": 1}'
    assert got.interaction_json == '{"max_zoom": 1.5, "zoom_used": true}'
    assert (got.revision, got.practice, got.shown_at) == (0, True, shown)
    assert got.submitted_at.tzinfo is not None  # UTC, now
    assert (got.reader_id, got.model_run_id, got.raw_reply) == (reader.id, None, None)


def test_a_runs_row_replaced_in_place_counts_a_revision_and_keeps_its_practice_flag(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    case = session.exec(select(Case)).one()
    run = ModelRun(study_id=study.id, name="m", model="m")  # type: ignore[arg-type]
    session.add(run)
    session.commit()
    assert study.id is not None and case.id is not None and run.id is not None
    who = Responder(model_run_id=run.id)
    first = fill_response(
        None, study_id=study.id, case_id=case.id, responder=who, status="failure", practice=True
    )
    session.add(first)
    session.commit()
    # NUL, which PostgreSQL refuses in text: escaped, flagged in the meta, recoverable
    raw = "Diagnosis: pneumothorax\x00"
    at = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
    again = fill_response(
        first,
        study_id=study.id,
        case_id=case.id,
        responder=who,
        status="answered",
        diagnosis="Pneumothorax",
        likert=3,
        submitted_at=at,
        meta={"latency_s": 1.5},
        raw_reply=raw,
    )
    assert again is first
    session.add(again)
    session.commit()
    session.expire_all()
    got = session.exec(select(Response)).one()
    assert (got.status, got.idk, got.diagnosis, got.likert) == (
        "answered",
        False,
        "Pneumothorax",
        3,
    )
    # one replacement: revision 0 -> 1; practice None kept the row's True; the answer's time
    assert (got.revision, got.practice, got.submitted_at) == (1, True, at)
    meta = json.loads(got.meta_json)
    assert meta == {"latency_s": 1.5, RAW_ENCODING_KEY: "json"}
    assert recover_raw(got.raw_reply, meta) == raw
    assert got.image_sha256 == ""  # nothing shown: a text-only run


def test_a_response_has_exactly_one_responder() -> None:
    for bad in ({}, {"reader_id": 1, "model_run_id": 2}):
        with pytest.raises(ValueError, match="one responder"):
            Responder(**bad)
