"""The sequential aided step with ``show = [..., "report"]`` through AppTest, on SQLite
and PostgreSQL (docs/aided.md): the model's Findings and Impression reach the page only
once the reader's own answer is stored, in the model's box; a report case's final answer
is a report again (Findings, Impression), a diagnosis case's a diagnosis, each stored as
the aided row beside the unaided one with the run shown."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, col, select
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.models import Case, CaseReport, ModelRun, Response
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import add_run
from tests.reader_app.ui.helpers import panel_data, panel_submit, texts

App = Callable[..., AppTest]
SHOW_REPORT = {
    "aid": {"run": "gpt-x", "design": "sequential", "show": ["diagnosis", "confidence", "report"]},
    "report_fields": ["findings", "impression"],
}


def test_the_model_report_is_shown_after_the_own_answer_and_a_report_answers_it(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, config=SHOW_REPORT)
    add_run(session, study)
    cases = list(session.exec(select(Case).where(Case.study_id == study.id)))
    report_case = cases[0]
    assert report_case.id is not None
    session.add(CaseReport(case_id=report_case.id, answer="report", reference_impression="R"))
    run = session.exec(select(ModelRun).where(ModelRun.study_id == study.id)).one()
    for row in session.exec(select(Response).where(Response.model_run_id == run.id)):
        source = next(c.source_id for c in cases if c.id == row.case_id)
        row.findings, row.impression = f"Model findings {source}", f"Model impression {source}"
        session.add(row)
    session.commit()
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    assert not at.exception

    for _ in range(2):
        page = texts(at)
        assert "Model findings" not in page and "Model says" not in page  # not yet
        mode = panel_data(at)["form"]["mode"]
        if mode == "report":
            panel_submit(at, findings="Own findings", impression="Own impression", likert=2)
        else:
            panel_submit(at, diagnosis="Own diagnosis", likert=2)
        assert not at.exception
        (unaided,) = session.exec(
            select(Response)
            .where(Response.reader_id == invite.reader.id, Response.arm == "unaided")
            .order_by(col(Response.id).desc())
        ).all()[:1]
        source = next(c.source_id for c in cases if c.id == unaided.case_id)
        assert (mode == "report") == (unaided.case_id == report_case.id)
        # the aided step: the model's answer and report in its own box
        said = "\n".join(str(m.value) for m in at.markdown).replace("\\", "")
        assert "AI model's answer" in said
        assert f"Diagnosis: Model says {source}" in said
        assert f"Findings: Model findings {source}" in said
        assert f"Impression: Model impression {source}" in said
        # a report case's final answer is a report, a diagnosis case's a diagnosis
        labels = {w.label for w in [*at.text_input, *at.text_area]}
        if mode == "report":
            assert labels == {"Findings", "Impression"}
            at.text_area(key="aid_findings").input("Final findings")
            at.text_area(key="aid_impression").input("Final impression")
        else:
            assert labels == {"Diagnosis"}
            at.text_input(key="aid_diagnosis").input("Final diagnosis")
        radio = at.radio(key="aid_likert")
        radio.set_value(radio.options[3])
        at.button(key="aid_submit").click().run()
        assert not at.exception
        session.expire_all()
        rows = {
            r.arm: r
            for r in session.exec(
                select(Response).where(
                    Response.reader_id == invite.reader.id, Response.case_id == unaided.case_id
                )
            )
        }
        aided = rows["aided"]
        assert (aided.aid_run_id, aided.likert) == (run.id, 3)
        if mode == "report":
            assert (aided.findings, aided.impression, aided.diagnosis) == (
                "Final findings",
                "Final impression",
                None,
            )
            assert (rows["unaided"].findings, rows["unaided"].impression) == (
                "Own findings",
                "Own impression",
            )
        else:
            assert (aided.diagnosis, aided.findings) == ("Final diagnosis", None)
            assert rows["unaided"].diagnosis == "Own diagnosis"
    assert "finished" in texts(at)
