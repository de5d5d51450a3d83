"""After a run, its answers are graded like a reader's and scored next to the human pool."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.llm import ChatClient
from reader_app.llm.prompts import load_prompt
from reader_app.models import Case, CaseImage, Verdict, utcnow
from reader_app.results import tidy_responses
from reader_app.runs.autograde_hook import autograde_after_run
from reader_app.runs.record import RunSpec
from reader_app.runs.runner import run_model
from scoring.score import score_responses
from tests.factories import make_reader, make_study
from tests.support.openai_stub import OpenAIStub, Reply


def test_model_run_is_graded_and_scored_beside_the_human_pool(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    pytest.importorskip("reader_app.grading.autograde")
    study = make_study(session, settings.asset_dir, n_cases=3)
    assert study.id is not None
    reader = make_reader(session, study, "R01", group="attending").reader
    ensure_order(session=session, reader=reader)
    human = {"case-000": ("Diagnosis number 0", 4), "case-001": ("Diagnosis number 1", 4)}
    while (view := next_case(session=session, reader=reader)) is not None:
        source_id = session.exec(select(Case.source_id).where(Case.public_id == view.public_id))
        dx, likert = human.get(source_id.one(), (None, None))
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=view.public_id,
            answer=validate_answer(dx, likert, dx is None),
            shown_at=utcnow(),
            image_sha256=view.image_sha256,
        )

    replies = {
        "case-000": Reply.answer("diagnosis number 0", 4),  # same answer after normalization
        "case-001": Reply.fenced("Diagnosis number 1", 3),
        "case-002": Reply.idk(),
    }
    image_case = dict(
        session.exec(
            select(CaseImage.sha256, Case.source_id).join(Case, Case.id == CaseImage.case_id)  # type: ignore[arg-type]
        ).all()
    )
    openai_stub.responder = lambda r: replies[image_case[r.image_sha256[0]]]
    with ChatClient(openai_stub.base_url, backoff_s=0.01) as client:
        run_model(
            session=session,
            study=study,
            spec=RunSpec(name="vlm", model="stub", group="Stub"),
            prompt=load_prompt(),
            client=client,
            asset_dir=settings.asset_dir,
            host="127.0.0.1",
        )
    report = autograde_after_run(session=session, study_id=study.id, actor="test")
    assert report.startswith("grading:")
    assert {v.source for v in session.exec(select(Verdict)).all()} == {"key"}

    frame = tidy_responses(session=session, study_id=study.id)
    model_rows = frame[frame["kind"] == "model"].sort_values("case_id")
    assert model_rows["correct"].tolist()[:2] == [1, 1]  # graded by the key, like R01's
    scores = score_responses(frame)
    by_name = {r["responder"]: r for r in scores["responders"]}
    # model: +5 (L4) +4 (L3) +0 (IDK) = 9 over N = 3 -> 1000 * (1 + 9/15) = 1600
    assert by_name["vlm"]["kind"] == "model" and by_name["vlm"]["radle_c"] == pytest.approx(1600)
    # R01: +5 +5 +0 = 10 -> 1000 * (1 + 10/15) = 1666.67; alone in the pool, the pool equals R01
    assert by_name["R01"]["radle_c"] == pytest.approx(1000 * (1 + 10 / 15))
    assert scores["human_pool"]["radle_c"] == pytest.approx(by_name["R01"]["radle_c"])
