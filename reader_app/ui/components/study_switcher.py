"""The staff sidebar: which study this is, and a switcher when there are several.

Which studies are offered is decided in ``context.staff_studies`` (a verified
email, or the staff links this tab holds); this only draws them. Stable keys:
``study_switch`` (the selectbox), ``study_add_link`` and ``study_add`` (paste
another study's staff link).
"""

from __future__ import annotations

import streamlit as st

from reader_app.core.auth import AuthError
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import SignedIn, hold_staff_link, staff_studies, switch_study


def _switch() -> None:
    chosen = st.session_state.get("study_switch")
    if isinstance(chosen, int):
        switch_study(chosen)


def _add_link() -> None:
    link = str(st.session_state.get("study_add_link") or "")
    st.session_state["study_add_link"] = ""  # a link is a credential: do not keep it shown
    try:
        reader = hold_staff_link(link)
    except AuthError as exc:
        st.session_state["_study_add_error"] = str(exc)
        return
    assert reader.id is not None
    switch_study(reader.id)


def study_sidebar(user: SignedIn, study_name: str) -> None:
    """The study's name on every staff page, and the switcher."""
    with st.sidebar:
        st.caption(
            f"Study: **{escape_markdown(study_name)}** · signed in as {escape_markdown(user.code)}"
        )
        studies = staff_studies(user)
        labels = {s.reader_id: s.label for s in studies}
        if len(studies) > 1 and user.reader_id in labels:
            st.selectbox(
                "Switch study",
                list(labels),
                index=list(labels).index(user.reader_id),
                format_func=lambda rid: labels[rid],
                key="study_switch",
                on_change=_switch,
            )
        if user.via_oidc:
            return
        with st.expander("Another study"):
            st.text_input(
                "Paste your staff link for another study",
                key="study_add_link",
                type="password",
            )
            st.button("Add and switch", key="study_add", on_click=_add_link)
            if error := st.session_state.pop("_study_add_error", None):
                st.error(escape_markdown(error))
