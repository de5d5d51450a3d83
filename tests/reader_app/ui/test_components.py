"""Each exam component on its own, through AppTest.from_function."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.ingest.assets import store_asset
from reader_app.settings import Settings, load_settings
from tests.factories import phantom_png


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

    from reader_app.ui.components.answer_form import answer_form

    def on_submit() -> None:
        st.session_state["submitted"] = (
            st.session_state["diagnosis"],
            st.session_state["likert"],
            st.session_state.get("_idk"),
            st.session_state["case_token"],
        )

    answer_form(on_submit, case_public_id="c123", likert_labels=["g", "u", "m", "c", "s"])


def test_answer_form_keys_labels_idk_and_token() -> None:
    at = AppTest.from_function(_form_app, default_timeout=30).run()
    assert {w.key for w in at.text_input} == {"diagnosis", "case_token"}
    assert at.text_input(key="case_token").value == "c123"
    assert at.radio(key="likert").options == ["0 · g", "1 · u", "2 · m", "3 · c", "4 · s"]
    at.text_input(key="diagnosis").set_value("Osteoma")
    at.radio(key="likert").set_value(4)
    at.button(key="submit").click().run()
    assert at.session_state["submitted"] == ("Osteoma", 4, None, "c123")
    at.button(key="idk").click().run()
    assert at.text_input(key="diagnosis").value == "" and at.radio(key="likert").value is None
    assert at.text_input(key="diagnosis").disabled
    at.button(key="submit").click().run()
    assert at.session_state["submitted"] == ("", None, True, "c123")


def _spot_app(case: object) -> None:  # annotations are evaluated in the AppTest script
    from reader_app.ui.components.case_viewer import show_case_images

    show_case_images(case)  # type: ignore[arg-type]


def test_spot_viewer_presets_and_enlarge(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "spot", ("file", "lung"), 1)
    at = AppTest.from_function(_spot_app, args=(case,), default_timeout=30).run()
    assert not at.exception
    assert at.segmented_control(key="window").options == ["Lung", "Original"]
    assert len(at.get("image")) == 1
    at.segmented_control(key="window").set_value("file").run()
    assert at.session_state["_windows_seen"] == {"lung", "file"}
    at.button(key="enlarge").click().run()
    assert at.session_state["_enlarged"] is True
    assert len(at.get("image")) == 2  # the page's image and the dialog's


def test_spot_viewer_with_one_window_has_no_presets(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "spot", ("",), 2)
    at = AppTest.from_function(_spot_app, args=(case,), default_timeout=30).run()
    assert not any(s.key == "window" for s in at.segmented_control)
    assert at.segmented_control(key="image").options == ["Image 1", "Image 2"]


def test_strip_viewer_slider_buttons_and_grid(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "strip", ("lung", "bone"), 16)
    at = AppTest.from_function(_spot_app, args=(case,), default_timeout=30).run()
    assert at.slider(key="slice").max == 16
    assert len(at.get("image")) == 2  # the large slice, and the grid as one list of 16
    assert sum(len(img.value) for img in at.get("image")) == 17  # type: ignore[attr-defined]
    assert at.button(key="slice_prev").disabled
    at.button(key="slice_next").click().run()
    assert at.slider(key="slice").value == 2
    captions = [c for img in at.get("image") for c in img.captions]  # type: ignore[attr-defined]
    assert "▶ 2/16" in captions  # the grid marks the slice in the large viewer


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
