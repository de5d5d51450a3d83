"""First visit, step 1: the study's consent text, accepted once."""

from __future__ import annotations

import streamlit as st

from reader_app.exam.consent import record_consent
from reader_app.study.config import study_settings
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import current_user, db_session, load_reader

user = current_user()
with db_session() as session:
    reader, study = load_reader(session, user)
    config = study_settings(study)

st.title(escape_markdown(config.title))
st.subheader("Before you start")
with st.container(border=True, key="consent_text"):
    st.markdown(config.consent)
agree, decline, _spacer = st.columns([1, 1, 3])
with agree:
    agreed = st.button("I agree", key="consent_agree", type="primary", width="stretch")
with decline:
    declined = st.button("I do not agree", key="consent_decline", width="stretch")

if agreed:
    with db_session() as session:
        reader, study = load_reader(session, user)
        record_consent(session=session, reader=reader, config=config)
    st.session_state.pop("_step", None)
    st.rerun()
if declined:
    st.info(
        "Thank you. Nothing has been recorded. You may close this window; "
        "if you change your mind, open your link again."
    )
