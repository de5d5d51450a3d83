"""The exam page through Streamlit's AppTest: sign-in, the form's rules, progress,
practice feedback, viewers, pause, study state, revisions and the finish page."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest
from sqlmodel import Session, func, select
from streamlit.testing.v1 import AppTest

from reader_app.core.auth import invite_reader, revoke_invite
from reader_app.core.settings import Settings
from reader_app.exam.revisions import answer_history
from reader_app.models import ResponseRevision
from reader_app.ui.components.case_panel import STREAMLIT_PATH
from tests.factories import make_reader, make_study
from tests.reader_app.ui.helpers import (
    answer,
    answer_idk,
    has_panel,
    images,
    panel_data,
    panel_error,
    panel_submit,
    progress_text,
    responses,
    texts,
    viewer_data,
    viewer_images,
)
from tests.support.text import plain

App = Callable[..., AppTest]


def test_sign_in_required(app_for: App) -> None:
    at = app_for("")
    assert not at.exception
    assert "sign-in link" in at.info[0].value
    assert not has_panel(at)


def test_forged_token_is_refused(app_for: App, session: Session, settings: Settings) -> None:
    make_study(session, settings.asset_dir, n_cases=1)
    at = app_for("not-a-real-token")
    assert "not valid" in at.error[0].value
    # issue 42: the message says what to do next (a re-invite rotates the link)
    said = plain(at.error[0].value)
    assert "Ask the study coordinator for a new link" in said, said
    assert "invited again" in said, said
    assert not has_panel(at)


def test_revoked_link_is_refused_at_once_even_mid_session(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    assert progress_text(at) == "Case 1 of 2"
    revoke_invite(session=session, reader=invite.reader, actor="coordinator")
    session.commit()
    answer(at, "Too late", 2)  # the open session is refused at its next click
    assert responses(session) == []
    assert "revoked" in panel_error(at) or any("revoked" in e.value for e in at.error)
    assert "revoked" in app_for(invite.token).error[0].value  # and the link on a reload


def test_rotated_link_ends_the_old_session(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    old = make_reader(session, study, ready=True)
    at = app_for(old.token)
    invite_reader(session=session, study=study, code="R01")  # re-invite: new link
    session.commit()
    at.run()
    assert any("replaced" in e.value for e in at.error)
    assert "not valid" in app_for(old.token).error[0].value


def test_another_readers_link_in_the_same_tab_starts_afresh(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3, n_practice=1, slug="a")
    other = make_study(session, settings.asset_dir, n_cases=5, slug="b")
    first = make_reader(session, study, "R01", ready=True)
    second = make_reader(session, other, "R02", ready=True)
    at = app_for(first.token)
    answer(at, "R01 practice", 1)  # R01 is now looking at practice feedback
    at.query_params["token"] = second.token
    at.run()
    assert progress_text(at) == "Case 1 of 5"  # R02's own order, not R01's cached one
    answer(at, "R02 first", 2)
    codes = {r.reader_id: r.diagnosis for r in responses(session)}
    assert codes == {first.reader.id: "R01 practice", second.reader.id: "R02 first"}


def test_answer_then_idk_then_finish(app_for: App, session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    assert not at.exception
    assert panel_data(at)["form"]["values"] is None  # nothing pre-filled
    assert progress_text(at) == "Case 1 of 2"

    # validation: a diagnosis without confidence is refused, nothing stored
    panel_submit(at, diagnosis="  Osteoid osteoma ")
    assert "confidence" in panel_error(at)
    assert responses(session) == []

    panel_submit(at, diagnosis="  Osteoid osteoma ", likert=3)
    assert progress_text(at) == "Case 2 of 2"
    assert panel_error(at) == "" and panel_data(at)["form"]["values"] is None

    answer_idk(at)
    # the last submit's notice, in the page's flow (never a toast), then the finish
    assert [s.value.startswith("Saved your answer to case 2") for s in at.success] == [True, False]
    assert "finished" in at.success[1].value
    assert not at.get("toast")
    assert progress_text(at) == "All 2 cases answered"
    rows = responses(session)
    assert [(r.diagnosis, r.likert, r.status, r.idk) for r in rows] == [
        ("Osteoid osteoma", 3, "answered", False),  # trimmed
        (None, None, "idk", True),
    ]
    for r in rows:
        assert r.shown_at is not None and r.shown_at <= r.submitted_at
        assert len(r.image_sha256) == 64 and not r.practice


def test_an_answer_over_streamlit_instead_of_the_door_is_logged_and_counted(
    app_for: App, session: Session, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """AppTest has no exam door: the panel's answer comes as Streamlit's trigger, the
    fallback path, which the server logs and counts (one per submit, refused or not)."""
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    before = STREAMLIT_PATH["answer"]
    with caplog.at_level(logging.WARNING, logger="reader_app.ui.components.case_panel"):
        panel_submit(at, diagnosis="Osteoid osteoma")  # refused: no confidence
        panel_submit(at, diagnosis="Osteoid osteoma", likert=3)
    assert STREAMLIT_PATH["answer"] == before + 2
    said = [r.getMessage() for r in caplog.records if "exam door not reached" in r.getMessage()]
    assert said == [
        "exam door not reached: the panel's answer came over Streamlit's websocket "
        f"({before + n} so far in this server)"
        for n in (1, 2)
    ]
    assert [r.diagnosis for r in responses(session)] == ["Osteoid osteoma"]


def test_validation_messages(app_for: App, session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    at = app_for(make_reader(session, study, ready=True).token)
    panel_submit(at)
    assert "Enter a diagnosis" in panel_error(at)
    panel_submit(at, diagnosis="   ", likert=2)
    assert "Enter a diagnosis" in panel_error(at)
    assert responses(session) == []
    # the box itself stops at 300 characters, and the service refuses more
    assert panel_data(at)["form"]["max_chars"] == 300
    panel_submit(at, diagnosis="x" * 301, likert=2)
    assert "300 characters" in panel_error(at)
    panel_submit(at, diagnosis="x" * 300, likert=2)
    assert [len(r.diagnosis or "") for r in responses(session)] == [300]


def test_a_hostile_submit_value_is_refused_with_a_message_and_nothing_stored(
    app_for: App, session: Session, settings: Settings
) -> None:
    """Issue 32 item 13: a NaN or a 400-digit integer in the marker or the viewer record
    is a clear refusal, never an OverflowError, never stored."""
    study = make_study(session, settings.asset_dir, n_cases=1, config={"grounding": True})
    at = app_for(make_reader(session, study, ready=True).token)
    huge = 10**400
    for bad in (
        {"marker": {"x": huge, "y": 3, "slice": None}},
        {"marker": {"x": float("nan"), "y": 3, "slice": None}},
        {"record": {"max_zoom": float("nan")}},
        {"record": {"fullscreen_s": huge}},
        {"record": {"slices_visited": [1, huge]}},
        {"active_ms": float("inf")},
    ):
        panel_submit(at, diagnosis="Nodule", likert=2, **bad)
        assert not at.exception, bad
        assert "not a finite number" in panel_error(at), bad
    for bad_value in ("not a mapping", {"case": 7}, {"likert": "3"}):
        panel_submit(at, bad_value)
        assert not at.exception
        assert panel_error(at), bad_value
    assert responses(session) == []
    panel_submit(at, diagnosis="Nodule", likert=2, no_focal_finding=True)
    assert [r.diagnosis for r in responses(session)] == ["Nodule"]


def test_idk_ticked_is_the_answer_and_can_be_undone(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    at = app_for(make_reader(session, study, ready=True).token)
    panel_submit(at, diagnosis="half typed", likert=1, idk=False)  # ticked, then unticked
    panel_submit(at, diagnosis="typed, then I don't know", idk=True)
    rows = responses(session)
    assert [(r.diagnosis, r.likert, r.idk) for r in rows] == [
        ("half typed", 1, False),
        (None, None, True),  # ticked: the page greys the text; "I don't know" is stored
    ]


def test_keyboard_shortcut_on_submit(app_for: App, session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    at = app_for(make_reader(session, study, ready=True).token)
    # the panel itself takes Ctrl+Enter (ui/static/panel.js); its label names the submit
    assert panel_data(at)["form"]["submit_label"] == "Submit answer"


def test_practice_shows_the_reference_only_after_the_answer(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, n_practice=1)
    at = app_for(make_reader(session, study, ready=True).token)
    assert progress_text(at) == "Practice 1 of 1"
    assert "Practice case" in panel_data(at)["note"]
    assert "Diagnosis number 0" not in texts(at)
    answer(at, "My practice guess", 1)
    # the submit's notice in the column's flow (no toast), then the reference answer
    assert at.success[0].value.startswith("Saved your answer to practice case 1")
    assert "Diagnosis number 0" in at.success[1].value
    assert not at.get("toast")
    assert "dx0" in texts(at)
    assert "My practice guess" in texts(at)
    assert not has_panel(at)
    at.button(key="continue").click().run()
    assert progress_text(at) == "Case 1 of 2"
    # in the panel, above the history (no banner row pushing the image down)
    assert panel_data(at)["note"].startswith("Practice is over")
    assert not at.info
    rows = responses(session)
    assert [(r.practice, r.diagnosis) for r in rows] == [(True, "My practice guess")]
    answer(at, "Scored answer", 4)
    assert progress_text(at) == "Case 2 of 2"
    assert not any(b.key == "continue" for b in at.button)  # no feedback when scored
    assert "Diagnosis number" not in texts(at)


def test_strip_viewer_gets_every_slice_of_every_window(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(
        session,
        settings.asset_dir,
        n_cases=1,
        strip_every=1,
        strip_slices=16,
        windows=("lung", "mediastinum", "bone"),
        montage=True,
        config={"default_windows": ["mediastinum", "lung"]},
    )
    at = app_for(make_reader(session, study, ready=True).token)
    assert not at.exception
    data = viewer_data(at)
    assert data["kind"] == "strip"
    assert [w["label"] for w in data["windows"]] == ["Lung", "Mediastinum", "Bone"]
    # the stored (manifest) order decides: its first window opens, whatever the
    # study's default_windows say (they choose what ingest renders when a row names none)
    assert data["window"] == 0
    # 16 slices per window; montages are not shown to readers
    assert [len(w["images"]) for w in data["windows"]] == [16, 16, 16]
    assert len(viewer_images(at)) == 48 and not images(at)
    answer(at, "Lung nodule", 2)
    row = responses(session)[0]
    assert len(row.image_sha256.split(",")) == 48  # 16 slices x 3 windows offered
    # no browser here, so no viewer record: stored as NULL, not as made-up zeros
    assert row.interaction_json is None
    assert json.loads(row.meta_json)["windows"] == ["lung"]


def test_spot_viewer_windows_and_the_light_study_theme(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(
        session, settings.asset_dir, n_cases=1, windows=("lung", "bone"), config={"theme": "light"}
    )
    at = app_for(make_reader(session, study, ready=True).token)
    data = viewer_data(at)
    assert [w["label"] for w in data["windows"]] == ["Lung", "Bone"]
    assert data["theme"] == "light"
    assert panel_data(at)["history"] == "Adult, cough" or "Adult, cough" in texts(at)
    answer(at, "Fracture", 3)
    assert responses(session)[0].diagnosis == "Fracture"


def test_pause_hides_the_case_and_resume_brings_it_back(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    at = app_for(make_reader(session, study, ready=True).token)
    at.button(key="pause").click().run()
    assert "Paused" in at.info[0].value
    assert not viewer_images(at) and not has_panel(at)
    at.button(key="resume").click().run()
    assert progress_text(at) == "Case 1 of 2"
    # the typed draft comes back from the panel's own memory of the tab:
    # tests/e2e/test_exam_form_browser.py checks that in Chromium
    assert panel_data(at)["form"]["values"] is None  # never a pre-selected confidence
    panel_submit(at, diagnosis="after the pause", likert=2)
    meta = json.loads(responses(session)[0].meta_json)
    assert meta["paused_s"] >= 0.0


def test_sign_out_and_back_resumes_at_the_first_unanswered_case(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    answer(at, "First", 1)
    at.button(key="pause").click().run()
    at.button(key="sign_out").click().run()
    assert "signed out" in at.success[0].value
    assert "token" not in at.query_params
    again = app_for(invite.token)
    assert progress_text(again) == "Case 2 of 3"


def test_locked_and_closed_studies_say_so_and_hide_the_form(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study, ready=True)
    for state, words in (("locked", "paused by its coordinator"), ("closed", "closed")):
        study.state = state
        session.add(study)
        session.commit()
        at = app_for(invite.token)
        assert words in at.warning[0].value
        assert not has_panel(at)


def test_answer_in_a_study_closed_meanwhile_is_refused_with_a_message(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    at = app_for(make_reader(session, study, ready=True).token)
    study.state = "closed"
    session.add(study)
    session.commit()
    answer(at, "Too late", 2)
    assert responses(session) == []
    assert any("closed" in w.value for w in at.warning) or "closed" in panel_error(at)


def test_no_going_back_unless_the_study_allows_revisions(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    at = app_for(make_reader(session, study, ready=True).token)
    answer(at, "First", 1)
    assert not any(b.key == "back" for b in at.button)


def test_revising_an_earlier_answer_keeps_the_old_one(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, config={"allow_revisions": True})
    at = app_for(make_reader(session, study, ready=True).token)
    panel_submit(
        at,
        diagnosis="First thought",
        likert=1,
        active_ms=1_500,
        record={"thumbnail_clicks": 3, "zoom_used": True},
    )
    at.button(key="back").click().run()
    assert "changing your earlier answer to case 1" in at.warning[0].value
    values = panel_data(at)["form"]["values"]
    assert (values["diagnosis"], values["likert"]) == ("First thought", 1)  # filled in
    assert panel_data(at)["form"]["submit_label"] == "Save changed answer"
    # the lowest confidence is a value, not "none"
    panel_submit(
        at,
        diagnosis="Second thought",
        likert=0,
        active_ms=700,
        record={"thumbnail_clicks": 0, "zoom_used": False},
    )
    assert progress_text(at) == "Case 2 of 2"  # back at the current case
    # issue 38: the revision's own time and viewer record on the answer, the first's kept
    # in the history beside it
    changed = responses(session)[0]
    assert changed.active_ms == 700
    assert json.loads(changed.interaction_json or "{}")["thumbnail_clicks"] == 0
    (kept,) = answer_history(session=session, response_id=changed.id or 0)
    assert kept.active_ms == 1_500
    assert json.loads(kept.interaction_json or "{}")["thumbnail_clicks"] == 3
    answer_idk(at)
    # from the finish page: review, change to IDK
    at.button(key="back").click().run()
    at.button(key="back").click().run()  # earlier: case 1
    values = panel_data(at)["form"]["values"]
    assert (values["diagnosis"], values["likert"]) == ("Second thought", 0)
    panel_submit(at, diagnosis="Second thought", likert=0, idk=True)
    assert "finished" in at.success[0].value
    first = responses(session)[0]
    assert (first.diagnosis, first.idk, first.revision) == (None, True, 2)
    history = answer_history(session=session, response_id=first.id or 0)
    assert [(h.diagnosis, h.likert) for h in history] == [
        ("First thought", 1),
        ("Second thought", 0),
    ]
    assert session.exec(select(func.count()).select_from(ResponseRevision)).one() == 2


def test_a_submit_for_a_case_already_stored_is_said_and_never_stored_on_the_next(
    app_for: App, session: Session, settings: Settings
) -> None:
    """The panel's value names the case it was drawn for: a second submit from a panel
    drawn for a stored case (a double click, a stale tab) is said, never stored on the
    next case. The browser side is tests/e2e/test_exam_form_browser.py."""
    study = make_study(session, settings.asset_dir, n_cases=3)
    at = app_for(make_reader(session, study, ready=True).token)
    first = panel_data(at)["case"]
    answer(at, "Pneumothorax", 4)
    assert progress_text(at) == "Case 2 of 3"
    assert panel_data(at)["case"] != first
    stale = {"case": first, "diagnosis": "Pneumothorax", "likert": 4, "idk": False}
    panel_submit(at, stale)
    # said in the panel's own status line (never a toast over Pause)
    assert "already saved" in panel_data(at)["notice"]
    assert not at.get("toast")
    assert progress_text(at) == "Case 2 of 3"
    assert [r.diagnosis for r in responses(session)] == ["Pneumothorax"]


def test_reader_without_profile_is_onboarded_first(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, config={"consent": "Agree?"})
    at = app_for(make_reader(session, study).token)
    assert any(b.key == "consent_agree" for b in at.button)
    assert not has_panel(at)


def test_query_count_per_case_is_constant(
    app_for: App, session: Session, settings: Settings, sql_log: list[str]
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=12)
    at = app_for(make_reader(session, study, ready=True).token)
    counts = []
    for _ in range(6):
        sql_log.clear()
        at.run()  # a plain rerun on the current case
        counts.append(len(sql_log))
        answer(at, "Same answer", 2)
    assert len(set(counts)) == 1, counts
    assert counts[0] == 5  # reader, study, next case, its images, its draft (docs/exam.md)


def test_a_refused_sign_in_clears_the_previous_readers_exam_state(
    app_for: App, session: Session, settings: Settings
) -> None:
    """Issue 32 item 14: a refused link in the same browser session leaves nothing of the
    previous reader's exam (case, order, form) for whoever signs in next."""
    study = make_study(session, settings.asset_dir, n_cases=3)
    first = make_reader(session, study, "R01", ready=True)
    second = make_reader(session, study, "R02", ready=True)
    at = app_for(first.token)
    answer(at, "R01 answer", 2)
    assert progress_text(at) == "Case 2 of 3"
    exam = at.session_state["_exam"]  # the exam's one typed state object
    assert exam.case is not None and exam.order is not None
    assert set(exam.answer_modes.values()) == {"diagnosis"}  # the cases' modes, kept there too
    at.query_params["token"] = "not-a-real-token"
    at.run()
    assert "not valid" in at.error[0].value
    for key in ("_exam", "_signed_in"):
        assert key not in at.session_state, key
    at.query_params["token"] = second.token
    at.run()
    assert progress_text(at) == "Case 1 of 3"  # R02's own first case, not R01's second
    answer(at, "R02 answer", 3)
    rows = responses(session)
    assert [(r.reader_id, r.diagnosis) for r in rows] == [
        (first.reader.id, "R01 answer"),
        (second.reader.id, "R02 answer"),
    ]
