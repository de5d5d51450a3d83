"""Invitations: create sign-in links in bulk (download them as CSV), revoke access.

A link is shown once: only its hash is stored. The links made here stay on
this page (and in its CSV) until you leave the browser session; inviting a
code again makes a new link and revokes the old one.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from reader_app.analysis.invites import (
    InviteError,
    create_invites,
    group_differences,
    links_frame,
    parse_invite_lines,
    people,
    people_display,
    revoke,
    shown_links,
)
from reader_app.core.auth import AuthError
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.models import ROLES
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.components.safe_text import show_table
from reader_app.ui.context import app_settings, db_session, load_reader, staff_user

user = staff_user("coordinator")
state = st.session_state
PAGE = "invites"  # its flash messages


def _invite() -> None:
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            requests = parse_invite_lines(state.get("inv_lines") or "", own_code=actor.code)
        except InviteError as exc:
            flash(PAGE, "error", str(exc).replace("\n", "\n\n"))  # one paragraph a line
            return
        try:
            issued = create_invites(
                session=session,
                actor=actor,
                requests=requests,
                role=state.get("inv_role") or "reader",
                base_url=app_settings().base_url,
            )
        except (InviteError, AuthError, ValueError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state["_inv_links"], replaced = shown_links(state.get("_inv_links", []), issued)
    state["inv_lines"] = ""
    message = f"{len(issued)} link(s) created. Download them now."
    if replaced:
        message += (
            f" The earlier link of {', '.join(replaced)} no longer works; "
            "its row is replaced by the new one."
        )
    flash(PAGE, "success", message)


def _revoke() -> None:
    code = state.get("inv_revoke")
    if not code:
        return
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            revoke(session=session, actor=actor, code=code)
        except (InviteError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    flash(PAGE, "success", "Access revoked.")


def _spreadsheet_csv(frame: pd.DataFrame) -> str:
    """Links CSV for a spreadsheet (mail merge): formula-like cells are defused."""
    return spreadsheet_csv(frame)


with db_session() as session:
    coordinator, study = load_reader(session, user)
    everyone = people(session=session, actor=coordinator)

st.title("Invites")
show_flash(PAGE)

st.subheader("Create sign-in links")
st.text_area(
    "One person per line: code, group (optional), email (optional, for institutional sign-in)",
    key="inv_lines",
    placeholder="R01,PGY2\nR02,board-certified,dr.lee@hospital.org",
)
st.selectbox("Role", ROLES, key="inv_role")
st.button("Create links", key="inv_create", type="primary", on_click=_invite)

issued = state.get("_inv_links", [])
if issued:
    links = links_frame(issued)
    st.caption("These links are shown once. Download them before you leave this page.")
    show_table(links, key="inv_links")
    st.download_button(
        "Download links (CSV)",
        data=_spreadsheet_csv(links),
        file_name=f"{study.slug}-invite-links.csv",
        mime="text/csv",
        key="inv_download",
        on_click="ignore",
    )

st.subheader("Everyone with access")
if differences := group_differences(everyone):
    with st.container(key="inv_group_differences"):
        st.warning(
            "Some readers answered their profile with a group other than the one given at "
            "invite. Scoring and exports use the invite's group (the Profile says column "
            "shows the reader's answer)."
        )
        for line in differences:
            st.text(line)
show_table(people_display(everyone), key="inv_people")
st.download_button(
    "Download the list (CSV, no links)",
    data=_spreadsheet_csv(everyone.drop(columns=["invited_at"]).assign(link="")),
    file_name=f"{study.slug}-people.csv",
    mime="text/csv",
    key="inv_people_csv",
    on_click="ignore",
)

st.subheader("Revoke access")
active = [
    c
    for c, a in zip(everyone["code"], everyone["access"], strict=True)
    if a == "active" and c != coordinator.code
]
st.selectbox("Person", active, index=None, key="inv_revoke")
st.button("Revoke", key="inv_revoke_button", on_click=_revoke)
st.caption(
    "Revoking stops the link and institutional sign-in at the person's next click; "
    "inviting the same code again gives them a new link."
)
