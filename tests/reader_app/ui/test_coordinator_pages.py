"""The coordinator's pages through AppTest: progress (with a reader who has not started),
grading progress, lock and close, invites (bulk, download, revoke), the case bank."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.core.auth import hash_token
from reader_app.core.settings import Settings
from reader_app.models import Reader, Study
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import plan_for, simulate_reader
from tests.reader_app.ui.helpers import texts
from tests.support.text import plain

PAGES = {
    "progress": "ui/pages/coordinator.py",
    "invites": "ui/pages/coordinator_invites.py",
    "cases": "ui/pages/coordinator_cases.py",
    "exports": "ui/pages/analyst_exports.py",
    "key": "ui/pages/answer_key.py",
}


@pytest.fixture
def coordinator_app(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> tuple[AppTest, Study]:
    study = make_study(session, settings.asset_dir, n_cases=3, n_practice=1, history="<i>42</i>")
    simulate_reader(session, study, "R-busy", plan_for(["case-001", "case-002"], "Cw"))
    make_reader(session, study, code="R-new", group="PGY1")
    token = make_reader(session, study, code="C01", role="coordinator").token
    return app_for(token), study


def test_progress_shows_the_reader_who_has_not_started(
    coordinator_app: tuple[AppTest, Study], session: Session
) -> None:
    at, study = coordinator_app
    at.switch_page(PAGES["progress"]).run()
    assert not at.exception
    caption = plain(at.sidebar.caption[0].value)
    assert caption == f"Study: **{study.title} ({study.slug})** · signed in as C01"
    tree = texts(at)
    assert "R-new" in tree and "not started" in tree and "R-busy" in tree
    assert "in progress" in tree
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Not started"] == "1" and metrics["In progress"] == "1"
    assert metrics["Waiting for an adjudicator"] == "1" and metrics["Key will grade"] == "1"

    at.button(key="co_state_locked").click().run()
    assert "The study is now locked." in plain(at.success[0].value)
    # Closing is final, so the first click only asks; Cancel leaves the study as it was.
    at.button(key="co_state_closed").click().run()
    assert "can never be reopened" in plain(at.warning[0].value)
    at.button(key="co_close_cancel").click().run()
    session.expire_all()
    assert session.get(Study, study.id).state == "locked"  # type: ignore[union-attr]
    assert not at.warning and at.button(key="co_state_closed")
    at.button(key="co_state_closed").click().run()
    at.button(key="co_close_confirm").click().run()
    session.expire_all()
    assert session.get(Study, study.id).state == "closed"  # type: ignore[union-attr]
    assert not [b for b in at.button if b.key and b.key.startswith("co_state_")]


def test_invites_in_bulk_then_revoke(
    coordinator_app: tuple[AppTest, Study], session: Session
) -> None:
    at, _ = coordinator_app
    at.switch_page(PAGES["invites"]).run()
    assert not at.exception
    at.text_area(key="inv_lines").set_value("R20,PGY2\n=cmd|' /C calc'!A0,board-certified")
    at.button(key="inv_create").click().run()
    assert not at.exception
    assert "2 link(s) created" in plain(at.success[0].value)
    assert "?token=" in texts(at)
    readers = {r.code: r for r in session.exec(select(Reader)).all()}
    assert readers["R20"].group_name == "PGY2" and readers["R20"].token_hash

    at.selectbox(key="inv_revoke").set_value("R-new").run()
    at.button(key="inv_revoke_button").click().run()
    assert "Access revoked." in plain(at.success[0].value)
    session.expire_all()
    assert session.exec(select(Reader).where(Reader.code == "R-new")).one().token_revoked_at

    at.text_area(key="inv_lines").set_value("C01")
    at.button(key="inv_create").click().run()
    assert "cannot re-invite yourself" in plain(at.error[0].value)


def test_a_re_invite_replaces_the_dead_link_in_the_shown_once_table(
    coordinator_app: tuple[AppTest, Study], session: Session
) -> None:
    at, _ = coordinator_app
    at.switch_page(PAGES["invites"]).run()
    at.text_area(key="inv_lines").set_value("W01,PGY4\nW02")
    at.button(key="inv_create").click().run()
    first = at.dataframe[0].value.set_index("code")["link"].to_dict()
    at.text_area(key="inv_lines").set_value("W01,PGY4")
    at.button(key="inv_create").click().run()
    message = plain(at.success[0].value)
    assert "1 link(s) created" in message and "earlier link of W01 no longer works" in message
    shown = at.dataframe[0].value
    assert sorted(shown["code"]) == ["W01", "W02"]  # one row per person, the new link
    new_link = shown.set_index("code").loc["W01", "link"]
    assert new_link != first["W01"]
    token = new_link.split("token=")[1]
    reader = session.exec(select(Reader).where(Reader.code == "W01")).one()
    session.refresh(reader)
    assert reader.token_hash == hash_token(token)  # the row shown is the live link


def test_an_invite_list_names_every_bad_line_at_once(
    coordinator_app: tuple[AppTest, Study], session: Session
) -> None:
    at, _ = coordinator_app
    at.switch_page(PAGES["invites"]).run()
    at.text_area(key="inv_lines").set_value("R30\nR31,g,not-mail\nR30\n,PGY1\nR32,a,b@c,d")
    at.button(key="inv_create").click().run()
    error = plain(at.error[0].value)
    for line in ("line 2:", "line 3:", "line 4:", "line 5:"):
        assert line in error
    assert "line 1:" not in error
    assert session.exec(select(Reader).where(Reader.code == "R30")).first() is None


def test_case_bank_with_thumbnails(coordinator_app: tuple[AppTest, Study]) -> None:
    at, _ = coordinator_app
    at.switch_page(PAGES["cases"]).run()
    assert not at.exception
    assert len(at.get("image")) == 4  # one thumbnail per case, practice included
    tree = texts(at)
    assert "case-000" in tree and "practice" in tree
    assert "<i>42</i>" in [t.value for t in at.text]  # the history, as plain text
    at.switch_page(PAGES["exports"]).run()
    assert not at.exception


def test_answer_key_shows_reference_regions_to_the_coordinator(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    study = make_study(
        session,
        settings.asset_dir,
        n_cases=3,
        reference_regions=[None, "3:1.5,2,10,8", None],
        reference_masks=[None, None, b"stored mask bytes"],
    )
    token = make_reader(session, study, code="C01", role="coordinator").token
    at = app_for(token)
    at.switch_page(PAGES["key"]).run()
    assert not at.exception
    (frame,) = at.dataframe  # the key table
    table = frame.value
    assert list(table["reference region"]) == ["", "3:1.5,2,10,8", "mask"]


def test_readers_cannot_reach_coordinator_pages(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    at = app_for(make_reader(session, study, code="R1", ready=True).token)
    for page in PAGES.values():
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(page)


def test_the_key_uploader_states_its_own_4_mb_cap(
    coordinator_app: tuple[AppTest, Study],
) -> None:
    """Issue 42: the key uploader said Streamlit's "500MB per file" although the upload
    gate holds a key CSV to KEY_UPLOAD_MB (4). The widget's own limit is what it shows."""
    at, _ = coordinator_app
    at.switch_page(PAGES["key"]).run()
    assert not at.exception
    (uploader,) = at.get("file_uploader")
    assert uploader.proto.max_upload_size_mb == 4  # == KEY_UPLOAD_MB, the gate's cap


def test_the_study_zip_uploader_states_the_configured_cap(
    coordinator_app: tuple[AppTest, Study], settings: Settings
) -> None:
    """Issue 42: every uploader said Streamlit's "500MB per file"; the study ZIP's says the
    server's configured cap (READERSTUDY_MAX_UPLOAD_MB), in its label and its widget."""
    at, _ = coordinator_app
    at.switch_page("ui/pages/study_setup.py").run()
    assert not at.exception
    (uploader,) = at.get("file_uploader")
    assert uploader.proto.max_upload_size_mb == settings.max_upload_mb
    assert f"(up to {settings.max_upload_mb} MB)" in uploader.proto.label
