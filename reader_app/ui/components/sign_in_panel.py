"""What a visitor who is not signed in sees: why, and (if configured) the OIDC button."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st
from streamlit.errors import StreamlitAPIException

from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.components.tab_storage import forget_tab
from reader_app.ui.context import oidc_configured


def oidc_providers() -> list[str | None]:
    """``[auth]`` with its own client_id is one unnamed provider; else ``[auth.NAME]`` each."""
    auth = st.secrets.get("auth", {})
    named = [name for name, value in auth.items() if isinstance(value, Mapping)]
    if "client_id" in auth or not named:
        return [None]
    return named


def _login(provider: str | None) -> None:
    try:
        st.login(provider) if provider else st.login()
    except StreamlitAPIException as exc:  # e.g. Authlib missing, bad [auth] section
        st.session_state["_auth_error"] = f"Institutional sign-in is not available: {exc}"


def _choose_reader() -> None:
    st.session_state["_oidc_reader"] = st.session_state.get("oidc_study")


def sign_in_panel() -> None:
    forget_tab()  # nobody is signed in: the tab keeps nothing of the last reader
    st.title("readerstudy")
    state = st.session_state
    if err := state.get("_auth_error"):
        st.error(escape_markdown(err))  # may quote the e-mail address the provider sent
    elif state.get("_signed_out"):
        st.success(
            "You are signed out. Open your sign-in link again to continue at your "
            "first unanswered case."
        )
    else:
        st.info("Open the personal sign-in link your study coordinator sent you.")
    if not oidc_configured():
        return
    if st.user.is_logged_in:
        choices = state.get("_oidc_choices")
        if choices:
            labels = {rid: f"{title} (as {code})" for rid, title, code in choices}
            st.selectbox(
                "You take part in several studies. Which one now?",
                options=list(labels),
                format_func=labels.__getitem__,
                key="oidc_study",
            )
            st.button("Continue", key="oidc_continue", type="primary", on_click=_choose_reader)
        if st.button("Sign out of your institution", key="oidc_logout"):
            st.logout()
        return
    for provider in oidc_providers():
        label = "Sign in with your institution"
        if provider:
            label = f"Sign in with {provider.capitalize()}"
        if st.button(label, key=f"oidc_login_{provider or 'default'}", type="primary"):
            _login(provider)
