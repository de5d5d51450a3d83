"""Each exam component on its own, through AppTest.from_function."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from reader_app.assets import store_asset
from reader_app.exam.next_case import CaseView, ImageView
from reader_app.settings import Settings, load_settings
from tests.factories import phantom_png
from tests.reader_app.ui.helpers import field, images, viewer_data


@pytest.fixture
def fresh_caches(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings for an asset store (the viewers touch no database: SQLite only)."""
    monkeypatch.setenv("READERSTUDY_DATABASE_URL", sqlite_url)
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("READERSTUDY_ASSET_DIR", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    return load_settings()


def _case(asset_dir: Path, kind: str, windows: tuple[str, ...], n: int) -> CaseView:
    images = []
    for window in windows:
        for j in range(n):
            sha = store_asset(asset_dir, phantom_png(j, window, size=64))
            role = "slice" if kind == "strip" else "image"
            images.append(ImageView(sha, f"{j + 1}/{n}", window, role, 64, 64))
    return CaseView("cpublic", kind, False, None, 0, 1, tuple(images))


def _form_app() -> None:
    import streamlit as st

    from reader_app.ui.components.answer_form import FormValues, answer_form, clear_form

    def on_submit(values: FormValues) -> None:
        st.session_state["submitted"] = (
            values.diagnosis,
            values.likert,
            values.idk,
            values.case_token,
        )
        if st.session_state.get("next_case_after_submit"):
            st.session_state["case"] = "c456"
            clear_form()

    case = st.session_state.setdefault("case", "c123")
    answer_form(on_submit, case_public_id=case, likert_labels=["g", "u", "m", "c", "s"])


def test_answer_form_keys_labels_idk_and_token() -> None:
    at = AppTest.from_function(_form_app, default_timeout=30).run()
    assert {w.key for w in at.text_input} == {
        "diagnosis__0",
        "case_token__0",
        "active_ms__0",
        "viewer_interaction__0",
        "location__0",  # the location step's marker (grounding studies), filled by the script
    }
    assert field(at.text_input, "case_token").value == "c123"
    assert field(at.radio, "likert").value is None  # nothing pre-selected
    assert field(at.radio, "likert").options == ["0 · g", "1 · u", "2 · m", "3 · c", "4 · s"]
    field(at.text_input, "diagnosis").set_value("Osteoma")
    field(at.radio, "likert").set_value(4)
    field(at.button, "submit").click().run()
    assert at.session_state["submitted"] == ("Osteoma", 4, False, "c123")
    # a form: the fields keep what is on screen and travel together with the submit
    field(at.checkbox, "idk").check()
    field(at.button, "submit").click().run()
    assert at.session_state["submitted"] == ("Osteoma", 4, True, "c123")


def test_a_new_case_gets_new_widgets_and_a_submit_is_read_from_its_own_drawing() -> None:
    """The next case's form is a new drawing: new widget keys (nothing the browser holds for
    the old ones can ride along), empty, and its submit is bound to the new case."""
    at = AppTest.from_function(_form_app, default_timeout=30)
    at.session_state["next_case_after_submit"] = True
    at.run()
    field(at.text_input, "diagnosis").set_value("Osteoma")
    field(at.radio, "likert").set_value(4)
    field(at.button, "submit").click().run()
    assert at.session_state["submitted"] == ("Osteoma", 4, False, "c123")
    assert {w.key for w in at.radio} == {"likert__1"}
    assert field(at.text_input, "case_token").value == "c456"
    assert (field(at.text_input, "diagnosis").value, field(at.radio, "likert").value) == ("", None)
    field(at.checkbox, "idk").check()
    field(at.button, "submit").click().run()
    assert at.session_state["submitted"] == ("", None, True, "c456")
    assert {w.key for w in at.checkbox} == {"idk__2"}


def _viewer_app(case: object, windows: tuple[str, ...] = ()) -> None:
    from reader_app.ui.components.case_viewer import show_case_images

    show_case_images(case, windows=windows)  # type: ignore[arg-type]


def test_spot_viewer_offers_every_window_in_preset_order(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "spot", ("file", "lung"), 1)
    at = AppTest.from_function(_viewer_app, args=(case, ("file",)), default_timeout=30).run()
    assert not at.exception
    data = viewer_data(at)
    assert data["kind"] == "spot" and data["case"] == "cpublic"
    assert [(w["name"], w["label"]) for w in data["windows"]] == [
        ("lung", "Lung"),
        ("file", "Original"),
    ]
    assert data["window"] == 1  # opens on the study's default window, "file"
    assert not images(at)  # no st.image: the viewer element shows the images
    assert all(len(w["images"]) == 1 for w in data["windows"])
    assert "zoom" in data["help"] and "window" in data["help"]


def test_viewer_frames_are_the_stored_pngs(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "strip", ("lung", "bone"), 16)
    at = AppTest.from_function(_viewer_app, args=(case,), default_timeout=30).run()
    data = viewer_data(at)
    assert data["kind"] == "strip"
    frames = [f for w in data["windows"] for f in w["images"]]
    assert [f["sha256"] for f in frames] == case.reader_sha256  # every slice, stored order
    assert [f["label"] for f in data["windows"][0]["images"]] == [f"{j}/16" for j in range(1, 17)]
    # the media URL is Streamlit's hash of the very bytes: st.image would give the same
    one = AppTest.from_function(_image_app, args=(case.images[0].sha256,)).run()
    assert frames[0]["url"].endswith(images(one)[0].rsplit("/", 1)[1])


def _image_app(sha: str) -> None:
    import streamlit as st

    from reader_app.ui.context import asset_bytes

    st.image(asset_bytes(sha), output_format="PNG")


def test_spot_with_several_images_steps_like_a_stack(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "spot", ("",), 2)
    at = AppTest.from_function(_viewer_app, args=(case,), default_timeout=30).run()
    data = viewer_data(at)
    assert data["kind"] == "spot"
    assert [f["label"] for f in data["windows"][0]["images"]] == ["Image 1/2", "Image 2/2"]
    assert data["help"].startswith("Arrow keys: images")


def test_clean_interaction_keeps_known_fields_of_the_right_type() -> None:
    from reader_app.ui.components.case_viewer import clean_interaction

    raw = {
        "case": "c1",
        "slices_visited": [3, 1, 3, "x", -2, 2.0],
        "windows_used": ["lung", 7, "bone"],
        "zoom_used": True,
        "pan_used": "yes",  # not a boolean: treated as not used
        "max_zoom": 2.456,
        "thumbnail_clicks": 2,
        "fullscreen_s": -4,
        "extra": "dropped",
    }
    assert clean_interaction(raw) == {
        "slices_visited": [1, 2, 3],
        "windows_used": ["lung", "bone"],
        "zoom_used": True,
        "pan_used": False,
        "one_to_one_used": False,
        "max_zoom": 2.46,
        "thumbnail_clicks": 2,
        "fullscreen_s": 0.0,
    }


def _header_app(paused: bool) -> None:
    import streamlit as st

    from reader_app.exam.order import OrderSummary
    from reader_app.exam.progress import progress_at
    from reader_app.ui.components.exam_header import exam_header, is_paused
    from reader_app.ui.components.pause_screen import pause_screen

    if is_paused():
        pause_screen(lambda: st.session_state.update(signed_out=True))
    else:
        exam_header("Chest study", progress_at(36, OrderSummary(200, 0, 1)), pausable=True)


def test_header_pause_and_resume() -> None:
    at = AppTest.from_function(_header_app, args=(False,), default_timeout=30).run()
    assert at.get("progress")[0].proto.text == "Case 37 of 200"
    at.button(key="pause").click().run()
    assert "Paused" in at.info[0].value
    at.button(key="resume").click().run()
    assert at.session_state["_paused_s"] >= 0.0
    assert at.get("progress")
    at.button(key="pause").click().run()
    at.button(key="sign_out").click().run()
    assert at.session_state["signed_out"] is True


def _feedback_app(idk: bool) -> None:
    import streamlit as st

    from reader_app.exam.practice import PracticeFeedback
    from reader_app.ui.components.practice_feedback import practice_feedback_panel

    feedback = PracticeFeedback(
        "Pneumothorax", ("PTX",), None if idk else "Pneumonia", None if idk else 2, idk
    )
    practice_feedback_panel(
        feedback, ["g", "u", "m", "c", "s"], lambda: st.session_state.update(next=True)
    )


@pytest.mark.parametrize("idk", [False, True])
def test_practice_feedback_panel(idk: bool) -> None:
    at = AppTest.from_function(_feedback_app, args=(idk,), default_timeout=30).run()
    assert at.success[0].value == "Pneumothorax"
    assert "PTX" in at.caption[0].value
    mine = [m.value for m in at.markdown]
    if idk:
        assert "I don't know" in mine
    else:
        assert any("Pneumonia" in m and "confidence 2 · m" in m for m in mine)
    at.button(key="continue").click().run()
    assert at.session_state["next"] is True


def _finish_app(review: bool) -> None:
    import streamlit as st

    from reader_app.ui.components.finish_panel import finish_panel, study_closed_panel

    finish_panel(
        40,
        on_review=(lambda: st.session_state.update(review=True)) if review else None,
        on_sign_out=lambda: None,
    )
    study_closed_panel("Closed for now.")


def test_finish_panel() -> None:
    at = AppTest.from_function(_finish_app, args=(True,), default_timeout=30).run()
    assert "40 cases answered" in at.success[0].value
    assert at.warning[0].value == "Closed for now."
    at.button(key="back").click().run()
    assert at.session_state["review"] is True
    plain = AppTest.from_function(_finish_app, args=(False,), default_timeout=30).run()
    assert not any(b.key == "back" for b in plain.button)


def _sign_in_app() -> None:
    from reader_app.ui.components.sign_in_panel import sign_in_panel

    sign_in_panel()


def test_sign_in_panel_messages() -> None:
    at = AppTest.from_function(_sign_in_app, default_timeout=30).run()
    assert "sign-in link" in at.info[0].value
    at.session_state["_signed_out"] = True
    assert "signed out" in at.run().success[0].value
    at.session_state["_auth_error"] = "This sign-in link has been revoked."
    assert "revoked" in at.run().error[0].value


def test_the_exam_script_survives_the_html_sanitiser() -> None:
    """st.html passes its body through DOMPurify, which silently drops a <script> whose text
    looks like markup (a comment saying "<name>" was enough): drafts, active time and
    Ctrl+Enter would all be gone without an error."""
    from reader_app.ui.components.answer_form import EXAM_SCRIPT

    body = EXAM_SCRIPT.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert not re.findall(r"<[A-Za-z/!?].{0,20}", body)
