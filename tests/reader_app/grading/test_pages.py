"""The adjudication and answer-key pages through Streamlit's AppTest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import Session, col, select
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.grading.rubric_grades import rubric_frame
from reader_app.models import AnswerKeyVersion, Verdict
from tests.factories import make_reader
from tests.reader_app.grading.helpers import (
    answer,
    case_by_source,
    make_key_study,
    model_run,
    reader,
)
from tests.support.text import plain

MAIN = str(Path(__file__).resolve().parents[3] / "reader_app" / "main.py")


@pytest.fixture
def app_for(settings: Settings) -> Callable[[str], AppTest]:
    st.cache_resource.clear()
    st.cache_data.clear()

    def make(token: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=30)
        at.query_params["token"] = token
        return at.run()

    return make


def _texts(at: AppTest) -> str:
    """Every element's protobuf as text: all that the browser would receive."""
    out: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def test_adjudicator_decides_blind(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    r1 = reader(session, study, "R01", group="board-certified")
    run = model_run(session, study, "gpt-run-7", model="gpt-9-secret")
    chest = case_by_source(session, study, "chest-02")
    bone = case_by_source(session, study, "bone-01")
    answer(session, study, chest, "Pectus carinatum", by=r1)
    answer(session, study, chest, "pectus carinatum", by=run)
    answer(session, study, bone, "Osteopoikilosis", by=run)  # the key grades it
    token = make_reader(session, study, code="A01", role="adjudicator").token

    at = app_for(token)
    assert not at.exception
    assert at.metric[0].value == "1"
    tree = _texts(at)
    assert "Pectus excavatum" in tree and "Funnel chest" in tree
    assert "carinatum" in tree
    for secret in ("R01", "board-certified", "gpt-run-7", "gpt-9-secret", "OpenAI", "chest-02"):
        assert secret not in tree
    at.text_input(key="adj_note").set_value("different entity")
    at.button(key="adj_incorrect").click().run()
    assert not at.exception
    assert "Saved: incorrect" in plain(at.success[0].value)
    assert at.metric[0].value == "0"
    verdicts = session.exec(select(Verdict).where(Verdict.source == "adjudicator")).all()
    assert [(v.normalized_answer, v.correct, v.note) for v in verdicts] == [
        ("pectus carinatum", 0, "different entity")
    ]

    # Undo: the decision is taken back and the same answer is shown again, to decide anew
    at.button(key="adj_undo").click().run()
    assert not at.exception
    assert "Undone: your decision (incorrect)" in plain(at.info[0].value)
    assert at.metric[0].value == "1" and "carinatum" in _texts(at)
    session.expire_all()
    live = select(Verdict).where(col(Verdict.active).is_(True), Verdict.source == "adjudicator")
    assert not session.exec(live).all()
    at.button(key="adj_correct").click().run()
    assert "Saved: correct" in plain(at.success[0].value)
    at.button(key="adj_undo").click().run()
    at.button(key="adj_undo").click().run()
    assert "no decision to undo" in plain(at.error[0].value)


def test_readers_do_not_get_the_adjudication_page(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    token = make_reader(session, study, code="R01").token
    at = app_for(token)
    assert "Adjudication" not in _texts(at) and "adj_correct" not in _texts(at)


def test_coordinator_edits_the_key(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    study = make_key_study(session, settings.asset_dir)
    chest = case_by_source(session, study, "chest-02")
    token = make_reader(session, study, code="C01", role="coordinator").token
    at = app_for(token)
    assert not at.exception
    at.selectbox(key="key_case").set_value(chest.id).run()
    assert at.text_input(key=f"key_dx_{chest.id}").value == "Pectus excavatum"
    at.text_area(key=f"key_syn_{chest.id}").set_value("Funnel chest\nTrichterbrust")
    at.text_input(key=f"key_reason_{chest.id}").set_value("German synonym")
    at.button(key="key_save").click().run()
    assert not at.exception
    assert "Key saved" in plain(at.success[0].value)
    (version,) = session.exec(select(AnswerKeyVersion)).all()
    assert (version.synonyms, version.reason, version.replaced_by) == (
        "Funnel chest",
        "German synonym",
        "C01",
    )


def test_reports_queue_and_agreement_panel(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    config = {"report_fields": ["findings", "impression"], "grading": {"adjudication": "double"}}
    key = [("ct-01", "Right lower lobe pneumonia", [])]
    study = make_key_study(session, settings.asset_dir, config=config, key=key, kind="strip")
    r1 = reader(session, study, "R01")
    ct = case_by_source(session, study, "ct-01")
    answer(
        session,
        study,
        ct,
        "Pneumonia",
        by=r1,
        findings="RLL consolidation.",
        impression="Pneumonia.",
    )
    token = make_reader(session, study, code="A01", role="adjudicator").token
    at = app_for(token)
    assert not at.exception
    assert "Agreement between adjudicators" in _texts(at)
    at.button_group(key="adj_mode").set_value("Reports").run()
    assert "RLL consolidation." in _texts(at) and "R01" not in _texts(at)
    at.button(key="rubric_save").click().run()
    assert "0 to 40" in plain(at.error[0].value)  # no grade entered: nothing stored
    at.number_input(key="rubric_score").set_value(33)
    at.button(key="rubric_save").click().run()
    assert not at.exception and "33 / 40" in plain(at.success[0].value)
    assert rubric_frame(session=session, study_id=study.id or 0)["rubric"].tolist() == [33]


def _peak_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_ask_the_judges_from_the_page_one_server_judge_and_a_gzip_bomb(
    app_for: Callable[[str], AppTest],
    session: Session,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 26: a one-judge study, its judge the server's; issue 32 item 2: a judge that
    answers a stacked-gzip bomb cannot blow the serving process (same 4 MiB cap)."""
    from tests.reader_app.llm.test_decode import gzip_gzip_bomb
    from tests.support.openai_stub import OpenAIStub, Reply
    from tests.support.server_judges import define_judges

    with OpenAIStub() as stub:
        define_judges(
            monkeypatch,
            settings.data_dir,
            {"judge-a": {"url": stub.base_url, "model": "judge-a", "max_attempts": 1}},
        )
        study = make_key_study(
            session, settings.asset_dir, config={"grading": {"judges": [{"name": "judge-a"}]}}
        )
        r1 = reader(session, study, "R01")
        answer(
            session, study, case_by_source(session, study, "chest-02"), "Pectus carinatum", by=r1
        )
        answer(session, study, case_by_source(session, study, "bone-01"), "Melorheostosis", by=r1)
        token = make_reader(session, study, code="A01", role="adjudicator").token
        bomb = gzip_gzip_bomb()
        stub.queue(
            Reply('{"verdict": "incorrect", "reason": "different entity"}'),
            Reply(body_bytes=bomb, headers={"Content-Encoding": "gzip, gzip"}),
        )
        at = app_for(token)
        assert at.metric[0].value == "2"
        before = _peak_rss_kb()
        at.button(key="adj_run_judges").click().run()
        growth_mb = (_peak_rss_kb() - before) / 1024
        assert not at.exception
        assert stub.served() == 2
        message = plain(at.success[0].value)
        assert "Judges asked about 2 answers: 1 agreed" in message and "1 failed" in message
        assert growth_mb < 300  # the 13 KB body decodes to 1 GiB: cut at 4 MiB
        assert at.metric[0].value == "1"
        session.expire_all()
        verdicts = session.exec(select(Verdict).where(Verdict.source == "judge")).all()
        assert [(v.correct, v.decided_by) for v in verdicts] == [(0, "judge:judge-a")]
