"""Streamlit entry point: page config, sign-in gate, role-based navigation."""

from __future__ import annotations

import streamlit as st

from reader_app.ui.context import sign_in
from reader_app.ui.navigation import PAGES_DIR, pages_for

st.set_page_config(page_title="readerstudy", page_icon="🩻", layout="wide")

user = sign_in()
if user is None:
    st.title("readerstudy")
    if err := st.session_state.get("_auth_error"):
        st.error(err)
    else:
        st.info("Open the personal sign-in link your study coordinator sent you.")
    st.stop()

specs = pages_for(user.role)
if not specs:
    st.title("readerstudy")
    st.info(f"Signed in as {user.code} ({user.role}). No pages are available for this role yet.")
    st.stop()
pages = [
    st.Page(PAGES_DIR / s.file, title=s.title, icon=s.icon, url_path=s.url_path, default=(i == 0))
    for i, s in enumerate(specs)
]
st.navigation(pages, position="sidebar" if len(pages) > 1 else "hidden").run()
