"""A flash message: set in a callback, shown once on the next run, escaped, per page."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.text import plain


def _page() -> None:
    import streamlit as st

    from reader_app.ui.components.flash import flash, show_flash

    show_flash("here")
    st.button("ok", key="ok", on_click=flash, args=("here", "success", "Saved: **3** / 40"))
    st.button("bad", key="bad", on_click=flash, args=("here", "error", "Refused: [x](y)"))
    st.button("note", key="note", on_click=flash, args=("here", "info", "Nothing changed."))
    st.button("elsewhere", key="elsewhere", on_click=flash, args=("there", "error", "other"))
    st.button("again", key="again")


def test_a_message_shows_once_with_its_kind_and_as_typed() -> None:
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert not at.success and not at.error and not at.info

    at.button(key="ok").click().run()
    assert [plain(m.value) for m in at.success] == ["Saved: **3** / 40"]
    assert "**3**" not in at.success[0].value  # escaped: no bold
    at.button(key="again").click().run()
    assert not at.success  # the next run forgets it

    at.button(key="bad").click().run()
    assert [plain(m.value) for m in at.error] == ["Refused: [x](y)"] and not at.success
    at.button(key="note").click().run()
    assert [plain(m.value) for m in at.info] == ["Nothing changed."] and not at.error


def test_a_message_kept_for_another_page_is_not_shown_here() -> None:
    at = AppTest.from_function(_page, default_timeout=30).run()
    at.button(key="elsewhere").click().run()
    assert not at.error and not at.success
    assert at.session_state["_flash_there"] == ("error", "other")  # still kept for "there"
