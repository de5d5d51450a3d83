"""``analysis_cache.kept``: a widget keeps its value while it is not drawn, and a value
its options no longer hold (another filter) leaves the widget at its default (Streamlit
resets a selectbox whose value is not among its options) without being forgotten: the
Per-case page's "Case" box relies on it (it popped the widget's state itself before)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page() -> None:
    import streamlit as st

    from reader_app.ui.components.analysis_cache import kept

    options = st.session_state.get("options", ["7", "12"])
    if st.session_state.get("drawn", True):
        st.selectbox("Case", options, index=None, **kept("pick", None, options))


def test_a_kept_choice_holds_waits_out_options_without_it_and_comes_back() -> None:
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert at.selectbox(key="pick").value is None
    at.selectbox(key="pick").select("12").run()
    assert at.selectbox(key="pick").value == "12"

    at.session_state["drawn"] = False  # another tab: the widget is not drawn
    at.run()
    at.session_state["drawn"] = True
    at.run()
    assert at.selectbox(key="pick").value == "12" and not at.exception

    at.session_state["options"] = ["3", "7"]  # a filter without it: none chosen
    at.run()
    assert not at.exception and at.selectbox(key="pick").value is None
    at.session_state["options"] = ["7", "12"]  # back: the kept choice again
    at.run()
    assert at.selectbox(key="pick").value == "12"
