"""An adjudicator takes back the last decision: audited, the verdict retired, the answer
back in the queue (first), and refused where it would change someone else's work."""

from __future__ import annotations

import pytest
from sqlmodel import Session, col, select

from reader_app.core.settings import Settings
from reader_app.grading.adjudication import GradingError, decide, undo_last_decision
from reader_app.grading.memory import active_verdict, verdict_history
from reader_app.grading.queue import adjudication_queue
from reader_app.models import Adjudication, AuditEvent
from tests.reader_app.grading.helpers import answer, case_by_source, make_key_study, reader

DOUBLE = {"grading": {"adjudication": "double"}}


def test_undo_retires_the_verdict_and_brings_the_answer_back_first(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    assert study.id is not None
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01")
    chest = case_by_source(session, study, "chest-02")
    vasc = case_by_source(session, study, "vasc-04")
    answer(session, study, chest, "Pectus carinatum", by=r1)
    answer(session, study, vasc, "Carotid dissection", by=r1)
    with pytest.raises(GradingError, match="no decision to undo"):
        undo_last_decision(session=session, adjudicator=adj)

    first = adjudication_queue(session=session, adjudicator=adj).item
    assert first is not None
    decide(session=session, adjudicator=adj, item_id=first.item_id, correct=True)
    second = adjudication_queue(session=session, adjudicator=adj).item
    assert second is not None and second.item_id != first.item_id
    decide(session=session, adjudicator=adj, item_id=second.item_id, correct=False)
    assert adjudication_queue(session=session, adjudicator=adj).size == 0

    undone = undo_last_decision(session=session, adjudicator=adj)  # the second, the latest
    assert undone.item_id == second.item_id and undone.correct == 0 and undone.verdict_retired
    case_id, norm = undone.case_id, undone.normalized_answer
    assert active_verdict(session=session, case_id=case_id, normalized_answer=norm) is None
    history = verdict_history(session=session, case_id=case_id, normalized_answer=norm)
    assert [v.active for v in history] == [False]
    # the decision is kept as history, the first decision and its verdict untouched
    rows = session.exec(select(Adjudication).order_by(col(Adjudication.id))).all()
    assert [(r.correct, r.active) for r in rows] == [(1, True), (0, False)]
    view = adjudication_queue(session=session, adjudicator=adj, first=second.item_id)
    assert view.size == 1 and view.item is not None and view.item.item_id == second.item_id
    events = session.exec(select(AuditEvent).where(AuditEvent.action == "adjudication.undo")).all()
    assert len(events) == 1 and events[0].actor == "A01"
    assert "verdict.retire" in session.exec(select(AuditEvent.action)).all()

    # decided again, differently: one active decision and one active verdict
    decide(session=session, adjudicator=adj, item_id=second.item_id, correct=True)
    verdict = active_verdict(session=session, case_id=case_id, normalized_answer=norm)
    assert verdict is not None and verdict.correct == 1
    # undo goes back one decision at a time: now the re-decision, then the first one
    assert undo_last_decision(session=session, adjudicator=adj).item_id == second.item_id
    assert undo_last_decision(session=session, adjudicator=adj).item_id == first.item_id
    assert adjudication_queue(session=session, adjudicator=adj).size == 2


def test_undo_is_refused_once_another_adjudicator_decided_after(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir, config=DOUBLE)
    a1 = reader(session, study, "A01", role="adjudicator")
    a2 = reader(session, study, "A02", role="adjudicator")
    r1 = reader(session, study, "R01")
    chest = case_by_source(session, study, "chest-02")
    answer(session, study, chest, "Pectus carinatum", by=r1)
    item = adjudication_queue(session=session, adjudicator=a1).item
    assert item is not None
    decide(session=session, adjudicator=a1, item_id=item.item_id, correct=False)
    decide(session=session, adjudicator=a2, item_id=item.item_id, correct=False)  # agree: locked
    with pytest.raises(GradingError, match="Another adjudicator has decided"):
        undo_last_decision(session=session, adjudicator=a1)
    undone = undo_last_decision(session=session, adjudicator=a2)  # the one who locked it
    assert undone.verdict_retired
    view = adjudication_queue(session=session, adjudicator=a2, first=item.item_id)
    assert view.item is not None and view.item.item_id == item.item_id
    assert adjudication_queue(session=session, adjudicator=a1).size == 0  # A01 has decided


def test_undo_of_a_decision_that_added_a_synonym_is_refused(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    r1 = reader(session, study, "R01")
    vasc = case_by_source(session, study, "vasc-04")
    answer(session, study, vasc, "Carotid cavernous sinus fistula", by=r1)
    item = adjudication_queue(session=session, adjudicator=adj).item
    assert item is not None
    decide(session=session, adjudicator=adj, item_id=item.item_id, correct=True, add_synonym=True)
    with pytest.raises(GradingError, match=r"cannot be undone here and it stands.*coordinator"):
        undo_last_decision(session=session, adjudicator=adj)
    assert session.exec(select(Adjudication)).one().active
