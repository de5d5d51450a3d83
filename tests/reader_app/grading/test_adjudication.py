"""Blinded queue, decisions, two-adjudicator mode with a third, kappa, verdict changes."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.grading.adjudication import (
    GradingError,
    adjudicator_agreement,
    change_verdict,
    decide,
)
from reader_app.grading.key import study_key
from reader_app.grading.memory import active_verdict, verdict_history
from reader_app.grading.queue import QueueItem, adjudication_queue
from reader_app.models import AuditEvent, Study
from reader_app.results import tidy_responses
from tests.reader_app.grading.helpers import (
    answer,
    case_by_source,
    make_key_study,
    model_run,
    reader,
)

DOUBLE = {"grading": {"adjudication": "double"}}


def test_queue_item_carries_no_responder_field() -> None:
    names = {f.name for f in dataclasses.fields(QueueItem)}
    assert names == {
        "item_id",
        "case_public_id",
        "case_kind",
        "history",
        "images",
        "reference",
        "synonyms",
        "candidate",
        "stage",
        "suggestions",
    }


def test_queue_shows_case_key_and_candidate_only(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01", group="board-certified")
    chest = case_by_source(session, study, "chest-02")
    answer(session, study, chest, "Pectus carinatum", by=r1)
    view = adjudication_queue(session=session, adjudicator=adj)
    item = view.item
    assert view.size == 1 and item is not None
    assert item.case_public_id == chest.public_id and item.case_public_id != "chest-02"
    assert (item.reference, item.synonyms) == ("Pectus excavatum", ("Funnel chest",))
    assert item.candidate == "Pectus carinatum" and item.stage == "first"
    assert len(item.images) == 1 and len(item.images[0].sha256) == 64
    assert item.suggestions[0].text == "Pectus excavatum"
    text = repr(item)
    assert "R01" not in text and "board-certified" not in text and "chest-02" not in text


def test_single_mode_decision_with_note_and_add_as_synonym(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    run = model_run(session, study, "run")
    vasc = case_by_source(session, study, "vasc-04")
    answer(session, study, vasc, "Carotid cavernous sinus fistula", by=run)
    item = adjudication_queue(session=session, adjudicator=adj).item
    assert item is not None
    result = decide(
        session=session,
        adjudicator=adj,
        item_id=item.item_id,
        correct=True,
        note="same entity",
        add_synonym=True,
    )
    assert result.final and result.correct == 1 and result.synonym_added
    key = study_key(session=session, study_id=study.id or 0)[vasc.id or 0]
    assert "Carotid cavernous sinus fistula" in key.synonyms
    verdict = active_verdict(
        session=session, case_id=vasc.id or 0, normalized_answer="carotid cavernous sinus fistula"
    )
    assert verdict is not None and verdict.source == "adjudicator" and verdict.note == "same entity"
    actions = session.exec(select(AuditEvent.action).order_by(col(AuditEvent.id))).all()
    assert "adjudication.decide" in actions and "answer_key.add_synonym" in actions
    with pytest.raises(GradingError):
        decide(session=session, adjudicator=adj, item_id=item.item_id, correct=False)


def test_incorrect_decision_does_not_add_a_synonym(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01")
    chest = case_by_source(session, study, "chest-02")
    answer(session, study, chest, "Pectus carinatum", by=r1)
    item = adjudication_queue(session=session, adjudicator=adj).item
    assert item is not None
    result = decide(
        session=session, adjudicator=adj, item_id=item.item_id, correct=False, add_synonym=True
    )
    assert not result.synonym_added
    assert study_key(session=session, study_id=study.id or 0)[chest.id or 0].synonyms == (
        "Funnel chest",
    )


def test_only_adjudicators_decide(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir)
    r1 = reader(session, study, "R01")
    coord = reader(session, study, "C01", role="coordinator")
    with pytest.raises(AuthError):
        adjudication_queue(session=session, adjudicator=r1)
    with pytest.raises(AuthError):
        decide(session=session, adjudicator=coord, item_id="x", correct=True)


def test_two_adjudicators_agree_disagree_and_a_third_resolves(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir, config=DOUBLE)
    a1, a2, a3 = (reader(session, study, f"A0{i}", role="adjudicator") for i in (1, 2, 3))
    r1 = reader(session, study, "R01")
    run = model_run(session, study, "run")
    chest = case_by_source(session, study, "chest-02")
    neuro = case_by_source(session, study, "neuro-03")
    bone = case_by_source(session, study, "bone-01")
    answer(session, study, chest, "Pectus carinatum", by=r1)
    answer(session, study, neuro, "Complete agenesis of corpus callosum", by=run)
    answer(session, study, bone, "Osteopoikylosis", by=r1)  # a typo

    def take(adj: object, correct_for: dict[str, bool]) -> None:
        seen = []
        while (view := adjudication_queue(session=session, adjudicator=adj, skip=seen)).item:  # type: ignore[arg-type]
            item = view.item
            if item.item_id in seen:
                break
            seen.append(item.item_id)
            decide(
                session=session,
                adjudicator=adj,  # type: ignore[arg-type]
                item_id=item.item_id,
                correct=correct_for[item.candidate],
            )

    take(
        a1,
        {
            "Pectus carinatum": False,
            "Complete agenesis of corpus callosum": False,
            "Osteopoikylosis": True,
        },
    )
    # one decision is not a verdict in double mode
    assert tidy_responses(session=session, study_id=study.id or 0)["correct"].isna().all()
    assert adjudication_queue(session=session, adjudicator=a1).size == 0
    assert adjudication_queue(session=session, adjudicator=a2).size == 3
    take(
        a2,
        {
            "Pectus carinatum": False,
            "Complete agenesis of corpus callosum": True,
            "Osteopoikylosis": True,
        },
    )
    got = dict(
        zip(
            tidy_responses(session=session, study_id=study.id or 0)["diagnosis"],
            tidy_responses(session=session, study_id=study.id or 0)["correct"],
            strict=True,
        )
    )
    assert got["Pectus carinatum"] == 0 and got["Osteopoikylosis"] == 1
    assert pd.isna(got["Complete agenesis of corpus callosum"])  # split: no verdict yet
    verdict = active_verdict(
        session=session, case_id=chest.id or 0, normalized_answer="pectus carinatum"
    )
    assert verdict is not None and verdict.decided_by == "A01+A02"

    # the disagreement waits for a third adjudicator only
    assert adjudication_queue(session=session, adjudicator=a1).size == 0
    assert adjudication_queue(session=session, adjudicator=a2).size == 0
    third = adjudication_queue(session=session, adjudicator=a3)
    assert third.size == 1 and third.item is not None and third.item.stage == "third"
    report = adjudicator_agreement(session=session, actor=a3)
    assert (report.n_items, report.n_agree, report.n_awaiting_third) == (3, 2, 1)
    result = decide(session=session, adjudicator=a3, item_id=third.item.item_id, correct=False)
    assert result.final and result.stage == "third" and result.correct == 0
    verdict = active_verdict(
        session=session,
        case_id=neuro.id or 0,
        normalized_answer="complete agenesis of corpus callosum",
    )
    assert verdict is not None and verdict.decided_by == "A03 (third; A01/A02 disagreed)"

    # kappa by hand: labels A01 = (0, 0, 1), A02 = (0, 1, 1) in some item order.
    # p_o = 2/3; A01 says 1 in 1/3, A02 in 2/3: p_e = 1/3*2/3 + 2/3*1/3 = 4/9;
    # kappa = (2/3 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4
    report = adjudicator_agreement(session=session, actor=a1)
    assert report.n_resolved_by_third == 1 and report.n_awaiting_third == 0
    assert report.pairs[0].adjudicators == ("A01", "A02")
    assert report.pairs[0].kappa == pytest.approx(0.4)
    assert report.kappa == pytest.approx(0.4)
    assert report.percent_agreement == pytest.approx(200 / 3)
    assert bone.id is not None


def test_change_verdict_rescores_everyone_and_keeps_history(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    coord = reader(session, study, "C01", role="coordinator")
    r1 = reader(session, study, "R01")
    runs = [model_run(session, study, f"run{i}") for i in range(2)]
    bone = case_by_source(session, study, "bone-01")
    for who in (r1, *runs):
        answer(session, study, bone, "Osteopoikylosis", by=who)
    item = adjudication_queue(session=session, adjudicator=adj).item
    assert item is not None
    decide(session=session, adjudicator=adj, item_id=item.item_id, correct=False)
    assert tidy_responses(session=session, study_id=study.id or 0)["correct"].tolist() == [0] * 3
    change = change_verdict(
        session=session,
        actor=coord,
        case_id=bone.id or 0,
        answer="osteopoikylosis",
        correct=True,
        note="a typo of the reference",
    )
    assert (change.previous, change.correct, change.responses_affected) == (0, 1, 3)
    assert tidy_responses(session=session, study_id=study.id or 0)["correct"].tolist() == [1] * 3
    history = verdict_history(
        session=session, case_id=bone.id or 0, normalized_answer="osteopoikylosis"
    )
    assert [(v.correct, v.active, v.decided_by) for v in history] == [
        (0, False, "A01"),
        (1, True, "C01"),
    ]
    with pytest.raises(GradingError, match="key"):
        change_verdict(
            session=session,
            actor=coord,
            case_id=bone.id or 0,
            answer="Osteopoikilosis",
            correct=False,
        )
    other = make_key_study(session, settings.asset_dir, slug="other")
    outsider = reader(session, other, "C09", role="coordinator")
    with pytest.raises(AuthError):
        change_verdict(
            session=session, actor=outsider, case_id=bone.id or 0, answer="x", correct=True
        )
    assert session.get(Study, study.id) is not None
