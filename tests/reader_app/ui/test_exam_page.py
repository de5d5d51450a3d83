"""The answer page through Streamlit's AppTest: widgets, validation, IDK, progress."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.models import AnswerKey, Response
from reader_app.settings import Settings
from tests.factories import make_reader, make_study


def test_sign_in_required(app_for: Callable[[str], AppTest]) -> None:
    at = app_for("")
    assert not at.exception
    assert "sign-in link" in at.info[0].value


def test_forged_token_is_refused(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    make_study(session, settings.asset_dir, n_cases=1)
    at = app_for("not-a-real-token")
    assert "not valid" in at.error[0].value
    assert not at.text_input


def test_answer_then_idk_then_finish(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study)
    at = app_for(invite.token)
    assert not at.exception
    assert at.text_input(key="diagnosis").value == ""
    assert "Case 1 of 2" in at.get("progress")[0].proto.text

    # validation: a diagnosis without confidence is refused, nothing stored
    at.text_input(key="diagnosis").set_value("Osteoid osteoma")
    at.button(key="submit").click().run()
    assert "confidence" in at.error[0].value
    assert session.exec(select(Response)).all() == []

    at.radio(key="likert").set_value(3)
    at.button(key="submit").click().run()
    assert "Case 2 of 2" in at.get("progress")[0].proto.text
    assert at.text_input(key="diagnosis").value == ""  # cleared for the next case

    # IDK clears and disables the other two
    at.text_input(key="diagnosis").set_value("half typed")
    at.checkbox(key="idk").check().run()
    assert at.text_input(key="diagnosis").value == ""
    assert at.text_input(key="diagnosis").disabled and at.radio(key="likert").disabled
    at.button(key="submit").click().run()
    assert "finished" in at.success[0].value

    rows = session.exec(select(Response).order_by(Response.id)).all()
    assert [(r.diagnosis, r.likert, r.status) for r in rows] == [
        ("Osteoid osteoma", 3, "answered"),
        (None, None, "idk"),
    ]


def test_page_shows_no_answer_key_or_source_id(
    app_for: Callable[[str], AppTest], session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    invite = make_reader(session, study)
    at = app_for(invite.token)
    tree = str(at._tree)
    keys = session.exec(select(AnswerKey)).all()
    for key in keys:
        assert key.diagnosis not in tree
    assert "case-000" not in tree
