"""Consent and profile pages through AppTest; and OIDC sign-in wiring."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.models import Reader
from tests.factories import make_reader, make_study
from tests.reader_app.ui.helpers import progress_text

App = Callable[..., AppTest]
CONSENT = "You agree that your **anonymous** answers are used for research."
AUTH = {
    "auth": {
        "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
        "cookie_secret": "test-secret",
        "client_id": "readerstudy",
        "client_secret": "x",
        "server_metadata_url": "https://idp.example/.well-known/openid-configuration",
    }
}


def _reader(session: Session) -> Reader:
    session.expire_all()
    return session.exec(select(Reader)).one()


def test_consent_then_profile_then_exam(app_for: App, session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, config={"consent": CONSENT})
    at = app_for(make_reader(session, study).token)
    assert "anonymous" in at.markdown[0].value or any("anonymous" in m.value for m in at.markdown)
    at.button(key="consent_decline").click().run()
    assert "Nothing has been recorded" in at.info[0].value
    assert _reader(session).consented_at is None

    at.button(key="consent_agree").click().run()
    assert _reader(session).consented_at is not None
    assert any(r.key == "profile_role" for r in at.radio)

    # validation, then a trainee profile
    at.button(key="profile_save").click().run()
    assert "Choose your role" in at.error[0].value
    at.radio(key="profile_role").set_value("trainee").run()
    at.number_input(key="profile_year").set_value(2)
    at.button(key="profile_save").click().run()
    assert "years of experience" in at.error[0].value
    at.number_input(key="profile_years").set_value(2)
    at.text_input(key="profile_subspecialty").set_value(" thoracic ")
    at.button(key="profile_save").click().run()
    assert progress_text(at) == "Case 1 of 2"
    reader = _reader(session)
    assert reader.group_name == "PGY2"
    assert '"subspecialty": "thoracic"' in reader.profile_json

    # a reload goes straight to the cases
    again = app_for(at.query_params["token"])
    assert progress_text(again) == "Case 1 of 2"


def test_profile_page_for_a_board_certified_reader(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    at = app_for(make_reader(session, study).token)
    assert not any(n.key == "profile_year" for n in at.number_input)  # trainees only
    at.radio(key="profile_role").set_value("board-certified").run()
    at.number_input(key="profile_years").set_value(15)
    at.button(key="profile_save").click().run()
    assert _reader(session).group_name == "board-certified"


def test_oidc_button_only_when_configured(
    app_for: App, session: Session, settings: Settings
) -> None:
    make_study(session, settings.asset_dir, n_cases=1)
    assert not any(b.key and b.key.startswith("oidc_login") for b in app_for("").button)
    at = app_for("", secrets=AUTH, user={"is_logged_in": False})
    assert at.button(key="oidc_login_default").proto.label == "Sign in with your institution"


def test_oidc_named_providers_get_a_button_each(
    app_for: App, session: Session, settings: Settings
) -> None:
    secrets = {
        "auth": {
            "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
            "cookie_secret": "s",
            "microsoft": {"client_id": "a", "client_secret": "b", "server_metadata_url": "u"},
            "google": {"client_id": "a", "client_secret": "b", "server_metadata_url": "u"},
        }
    }
    at = app_for("", secrets=secrets, user={"is_logged_in": False})
    labels = {b.key: b.proto.label for b in at.button}
    assert labels["oidc_login_microsoft"] == "Sign in with Microsoft"
    assert labels["oidc_login_google"] == "Sign in with Google"


def test_oidc_signs_in_the_reader_with_that_email(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    make_reader(session, study, ready=True, email="dr.who@hospital.example")
    user = {"is_logged_in": True, "email": "Dr.Who@hospital.example", "email_verified": True}
    at = app_for("", secrets=AUTH, user=user)
    assert progress_text(at) == "Case 1 of 2"


def test_oidc_unknown_or_unverified_email_is_refused(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    make_reader(session, study, ready=True, email="dr.who@hospital.example")
    unknown = app_for("", secrets=AUTH, user={"is_logged_in": True, "email": "x@y.example"})
    assert "not registered" in unknown.error[0].value
    assert any(b.key == "oidc_logout" for b in unknown.button)
    unverified = app_for(
        "",
        secrets=AUTH,
        user={"is_logged_in": True, "email": "dr.who@hospital.example", "email_verified": False},
    )
    assert "not verified" in unverified.error[0].value


def test_oidc_reader_in_two_studies_chooses_one(
    app_for: App, session: Session, settings: Settings
) -> None:
    a = make_study(session, settings.asset_dir, n_cases=1, slug="a")
    b = make_study(session, settings.asset_dir, n_cases=3, slug="b")
    make_reader(session, a, ready=True, email="r@x.example")
    in_b = make_reader(session, b, ready=True, email="r@x.example").reader
    at = app_for("", secrets=AUTH, user={"is_logged_in": True, "email": "r@x.example"})
    choice = at.selectbox(key="oidc_study")
    assert len(choice.options) == 2
    choice.set_value(in_b.id)
    at.button(key="oidc_continue").click().run()
    assert progress_text(at) == "Case 1 of 3"
