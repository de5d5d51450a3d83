"""The answer key: CSV contract, coordinator edits with history, audit and re-grading."""

from __future__ import annotations

import io
import json

import pytest
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.grading.autograde import autograde_study
from reader_app.grading.key import AnswerKeyError, parse_key_csv, study_key, write_key_csv
from reader_app.grading.key_admin import (
    add_synonym,
    import_key,
    key_history,
    list_key,
    update_key,
)
from reader_app.grading.memory import active_verdict, verdict_history
from reader_app.models import AuditEvent
from reader_app.results import tidy_responses
from tests.reader_app.grading.helpers import answer, case_by_source, make_key_study, reader


def test_parse_key_csv_reads_the_contract() -> None:
    text = (
        "\ufeffcase_id,diagnosis,synonyms\n"
        "vasc-04,Carotid-cavernous fistula,CCF| caroticocavernous fistula |CCF||\n"
        'bone-01,"Osteopoikilosis",\n'
    )
    key = parse_key_csv(text)
    assert key["vasc-04"].synonyms == ("CCF", "caroticocavernous fistula")
    assert key["bone-01"].synonyms == ()
    assert key["vasc-04"].accepted == {
        "carotid cavernous fistula",
        "ccf",
        "caroticocavernous fistula",
    }
    out = io.StringIO()
    write_key_csv(key.values(), out)
    assert parse_key_csv(out.getvalue()) == key


def test_parse_key_csv_reports_every_problem() -> None:
    text = "case_id,diagnosis,synonyms\na,,x\n,Thing,\nb,One,\nb,Two,\nc,Bad|ref,\n"
    with pytest.raises(AnswerKeyError) as err:
        parse_key_csv(text)
    message = str(err.value)
    assert "line 2" in message and "line 3" in message and "line 5" in message
    assert "line 6" in message
    with pytest.raises(AnswerKeyError, match="columns"):
        parse_key_csv("id,answer\n1,x\n")


def test_coordinator_edit_is_audited_kept_and_regrades(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    coord = reader(session, study, "C01", role="coordinator")
    r1 = reader(session, study, "R01")
    chest = case_by_source(session, study, "chest-02")
    answer(session, study, chest, "Funnel chest", by=r1)
    autograde_study(session=session, study_id=study.id or 0)
    assert active_verdict(session=session, case_id=chest.id or 0, normalized_answer="funnel chest")

    # coordinator drops the synonym: the key verdict is retired, the answer is pending again
    change = update_key(
        session=session,
        actor=coord,
        case_id=chest.id or 0,
        diagnosis="Pectus excavatum",
        synonyms=["Pectus excavatum deformity"],
        reason="synonym too loose",
    )
    assert change.changed and change.regrade is not None
    assert change.regrade.reopened == 1 and change.regrade.responses_affected == 1
    assert (
        active_verdict(session=session, case_id=chest.id or 0, normalized_answer="funnel chest")
        is None
    )
    frame = tidy_responses(session=session, study_id=study.id or 0)
    assert frame["correct"].isna().all()

    # history: the old key and the verdict both survive as inactive rows
    history = key_history(session=session, actor=coord, case_id=chest.id or 0)
    assert [h.synonyms for h in history] == ["Funnel chest"]
    assert history[0].replaced_by == "C01" and history[0].reason == "synonym too loose"
    old = verdict_history(session=session, case_id=chest.id or 0, normalized_answer="funnel chest")
    assert len(old) == 1 and not old[0].active

    events = session.exec(select(AuditEvent).order_by(col(AuditEvent.id))).all()
    update = next(e for e in events if e.action == "answer_key.update")
    detail = json.loads(update.detail_json)
    assert detail["before"]["synonyms"] == ["Funnel chest"]
    assert detail["after"]["synonyms"] == ["Pectus excavatum deformity"]
    assert any(e.action == "verdict.retire" for e in events)

    # an unchanged key is a no-op
    again = update_key(
        session=session,
        actor=coord,
        case_id=chest.id or 0,
        diagnosis="Pectus excavatum",
        synonyms="Pectus excavatum deformity",
    )
    assert not again.changed


def test_new_synonym_overrides_an_incorrect_verdict_and_rescores(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    adj = reader(session, study, "A01", role="adjudicator")
    r1, r2 = reader(session, study, "R01"), reader(session, study, "R02")
    vasc = case_by_source(session, study, "vasc-04")
    answer(session, study, vasc, "Carotico-cavernous fistula", by=r1)
    answer(session, study, vasc, "carotico cavernous fistula", by=r2)
    from reader_app.grading.memory import record_verdict

    record_verdict(
        session=session,
        study_id=study.id or 0,
        case_id=vasc.id or 0,
        normalized_answer="carotico cavernous fistula",
        correct=0,
        source="adjudicator",
        decided_by="A01",
    )
    session.commit()
    assert tidy_responses(session=session, study_id=study.id or 0)["correct"].tolist() == [0, 0]
    change = add_synonym(
        session=session, actor=adj, case_id=vasc.id or 0, synonym="Carotico-cavernous fistula"
    )
    assert change.regrade is not None and change.regrade.accepted == 1
    assert change.regrade.responses_affected == 2
    assert tidy_responses(session=session, study_id=study.id or 0)["correct"].tolist() == [1, 1]
    history = verdict_history(
        session=session, case_id=vasc.id or 0, normalized_answer="carotico cavernous fistula"
    )
    assert [(v.source, v.correct, v.active) for v in history] == [
        ("adjudicator", 0, False),
        ("key", 1, True),
    ]


def test_changing_the_reference_reopens_adjudicated_answers(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    coord = reader(session, study, "C01", role="coordinator")
    r1 = reader(session, study, "R01")
    bone = case_by_source(session, study, "bone-01")
    answer(session, study, bone, "Melorheostosis", by=r1)
    from reader_app.grading.memory import record_verdict

    record_verdict(
        session=session,
        study_id=study.id or 0,
        case_id=bone.id or 0,
        normalized_answer="melorheostosis",
        correct=0,
        source="adjudicator",
        decided_by="A01",
    )
    session.commit()
    # a synonym-only change leaves the adjudicator's verdict alone...
    update_key(
        session=session,
        actor=coord,
        case_id=bone.id or 0,
        diagnosis="Osteopoikilosis",
        synonyms=["Spotted bone disease"],
    )
    assert active_verdict(session=session, case_id=bone.id or 0, normalized_answer="melorheostosis")
    # ...a new reference diagnosis reopens it: it was judged against the old one
    change = update_key(
        session=session, actor=coord, case_id=bone.id or 0, diagnosis="Melorheostosis", synonyms=""
    )
    assert change.regrade is not None and change.regrade.accepted == 1
    verdict = active_verdict(
        session=session, case_id=bone.id or 0, normalized_answer="melorheostosis"
    )
    assert verdict is not None and verdict.source == "key" and verdict.correct == 1


def test_key_edits_need_the_coordinator_role_and_the_same_study(
    session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    other = make_key_study(session, settings.asset_dir, slug="other")
    r1 = reader(session, study, "R01")
    adj = reader(session, study, "A01", role="adjudicator")
    foreign = reader(session, other, "C09", role="coordinator")
    case = case_by_source(session, study, "bone-01")
    with pytest.raises(AuthError):
        update_key(session=session, actor=r1, case_id=case.id or 0, diagnosis="x", synonyms="")
    with pytest.raises(AuthError):
        update_key(session=session, actor=adj, case_id=case.id or 0, diagnosis="x", synonyms="")
    with pytest.raises(AuthError):
        update_key(session=session, actor=foreign, case_id=case.id or 0, diagnosis="x", synonyms="")
    with pytest.raises(AuthError):
        list_key(session=session, actor=adj)
    with pytest.raises(AnswerKeyError):
        add_synonym(session=session, actor=adj, case_id=case.id or 0, synonym="  ")


def test_import_key_file_is_all_or_nothing(session: Session, settings: Settings) -> None:
    study = make_key_study(session, settings.asset_dir)
    coord = reader(session, study, "C01", role="coordinator")
    with pytest.raises(AnswerKeyError, match="no case"):
        import_key(
            session=session,
            actor=coord,
            entries=parse_key_csv("case_id,diagnosis,synonyms\nbone-01,X,\nnope,Y,\n"),
        )
    assert study_key(session=session, study_id=study.id or 0)
    assert {e.diagnosis for e in study_key(session=session, study_id=study.id or 0).values()} >= {
        "Osteopoikilosis"
    }
    result = import_key(
        session=session,
        actor=coord,
        entries=parse_key_csv(
            "case_id,diagnosis,synonyms\nbone-01,Osteopoikilosis,Spotted bone disease\n"
            "chest-02,Pectus excavatum,Funnel chest\n"
        ),
    )
    assert (result.changed, result.unchanged, result.not_in_file) == (1, 1, 2)
    rows = {r.source_id: r for r in list_key(session=session, actor=coord)}
    assert rows["bone-01"].synonyms == ("Spotted bone disease",)
