"""The sequential aided exam's review through AppTest, on SQLite and PostgreSQL
(docs/aided.md, "Changing an earlier answer"): going back changes the final (aided)
answer, with the model's answer beside it again; the unaided row stays as it was."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.models import Case, Response
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import SEQUENTIAL, add_run
from tests.reader_app.ui.helpers import panel_data, panel_submit, progress_text

App = Callable[..., AppTest]


def test_going_back_changes_the_final_answer_beside_the_model(
    app_for: App, session: Session, settings: Settings
) -> None:
    config: dict[str, object] = {**SEQUENTIAL, "allow_revisions": True}
    study = make_study(session, settings.asset_dir, n_cases=2, config=config)
    add_run(session, study)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    panel_submit(at, diagnosis="Own answer", likert=2)
    at.text_input(key="aid_diagnosis").input("Final answer")
    radio = at.radio(key="aid_likert")
    radio.set_value(radio.options[3])
    at.button(key="aid_submit").click().run()
    assert not at.exception and progress_text(at) == "Case 2 of 2"

    at.button(key="back").click().run()
    assert not at.exception
    assert "changing your final answer to case 1" in at.warning[0].value
    said = "\n".join(str(m.value) for m in at.markdown).replace("\\", "")
    (row,) = session.exec(select(Response).where(Response.arm == "aided")).all()
    source = session.exec(select(Case.source_id).where(Case.id == row.case_id)).one()
    assert "AI model's answer" in said and f"Diagnosis: Model says {source}" in said
    values = panel_data(at)["form"]["values"]
    assert (values["diagnosis"], values["likert"]) == ("Final answer", 3)  # the aided row
    panel_submit(at, diagnosis="Changed final answer", likert=1)
    assert not at.exception and progress_text(at) == "Case 2 of 2"
    session.expire_all()
    rows = {
        r.arm: (r.diagnosis, r.likert, r.revision)
        for r in session.exec(
            select(Response).where(
                Response.reader_id == invite.reader.id, Response.case_id == row.case_id
            )
        )
    }
    assert rows == {
        "unaided": ("Own answer", 2, 0),
        "aided": ("Changed final answer", 1, 1),
    }
