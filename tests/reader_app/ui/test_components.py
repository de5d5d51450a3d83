"""Each exam component on its own, through AppTest.from_function."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings, load_settings
from reader_app.exam.next_case import CaseView, ImageView
from reader_app.study.assets import store_asset
from reader_app.ui.components.case_viewer import STATIC
from tests.factories import phantom_png
from tests.reader_app.ui.helpers import images, panel_data, panel_submit, viewer_data


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


def _panel_app(case: object) -> None:
    import streamlit as st

    from reader_app.ui.components.case_panel import (
        PanelCase,
        PanelForm,
        case_panel,
        submitted_value,
    )

    def on_submit() -> None:
        st.session_state["submitted"] = submitted_value()

    form = PanelForm(likert_labels=["g", "u", "m", "c", "s"])
    case_panel(PanelCase(case, form), on_submit, grounding=True)  # type: ignore[arg-type]


def test_the_case_panel_is_one_element_whose_one_value_reaches_the_callback(
    fresh_caches: Settings,
) -> None:
    case = _case(fresh_caches.asset_dir, "spot", ("lung",), 1)
    at = AppTest.from_function(_panel_app, args=(case,), default_timeout=30).run()
    assert not at.exception
    assert [e.key for e in at.get("bidi_component")] == ["panel"]  # viewer and form in one
    assert not at.text_input and not at.radio and not at.button  # no Streamlit widgets
    data = panel_data(at)
    assert data["case"] == "cpublic" and data["viewer"]["case"] == "cpublic"
    assert data["viewer"]["grounding"] is True
    assert data["form"]["likert_labels"] == ["g", "u", "m", "c", "s"]
    assert data["form"]["submit_label"] == "Submit answer" and data["form"]["values"] is None
    marker = {"x": 10.5, "y": 3, "slice": None}
    panel_submit(at, diagnosis="Osteoma", likert=4, marker=marker)
    sent = at.session_state["submitted"]
    assert (sent["case"], sent["diagnosis"], sent["likert"], sent["marker"]) == (
        "cpublic",
        "Osteoma",
        4,
        marker,
    )


def _viewer_app(case: object) -> None:
    from reader_app.ui.components.case_viewer import show_case_images

    show_case_images(case)  # type: ignore[arg-type]


def test_spot_viewer_offers_every_window_in_stored_order(fresh_caches: Settings) -> None:
    case = _case(fresh_caches.asset_dir, "spot", ("file", "lung"), 1)
    at = AppTest.from_function(_viewer_app, args=(case,), default_timeout=30).run()
    assert not at.exception
    data = viewer_data(at)
    assert data["kind"] == "spot" and data["case"] == "cpublic"
    # the stored (manifest) order, and the file's own window by its one name
    assert [(w["name"], w["label"]) for w in data["windows"]] == [
        ("original", "Original"),
        ("lung", "Lung"),
    ]
    assert data["window"] == 0  # opens on the first listed
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
    assert at.session_state["_exam"].paused_s >= 0.0
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


# How Streamlit names its own rendered nodes: test ids, widget keys' classes, the app root.
STREAMLIT_DOM = ("data-testid", "st-key-", "stApp", "stMain", "stVerticalBlock")


@pytest.mark.parametrize(
    "script", sorted(p.name for p in STATIC.glob("*.js") if ".min." not in p.name)
)
def test_our_scripts_never_reach_into_streamlits_rendered_dom(script: str) -> None:
    """A component keeps to its own DOM (a Streamlit release may rename its nodes): what it
    needs around it, it finds by walking up from its own element."""
    source = (STATIC / script).read_text(encoding="utf-8")
    assert not [name for name in STREAMLIT_DOM if name in source], script
