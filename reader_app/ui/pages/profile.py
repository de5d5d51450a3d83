"""First visit, step 2: a short profile, which becomes the reader's group in analysis."""

from __future__ import annotations

import streamlit as st

from reader_app.exam.profile import (
    MAX_SUBSPECIALTY_CHARS,
    MAX_TRAINEE_YEAR,
    MAX_YEARS,
    PROFILE_ROLES,
    ProfileError,
    save_profile,
    validate_profile,
)
from reader_app.study.config import study_settings
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import current_user, db_session, load_reader

user = current_user()
with db_session() as session:
    reader, study = load_reader(session, user)
    config = study_settings(study)

st.title(escape_markdown(config.title))
st.subheader("About you")
st.caption("Used only to group readers in the analysis. Your name is not asked.")
role = st.radio(
    "Your role",
    options=list(PROFILE_ROLES),
    format_func=PROFILE_ROLES.__getitem__,
    key="profile_role",
    index=None,
)
year = None
if role == "trainee":
    year = st.number_input(
        "Training year", min_value=1, max_value=MAX_TRAINEE_YEAR, step=1, key="profile_year"
    )
years = st.number_input(
    "Years of experience in radiology",
    min_value=0,
    max_value=MAX_YEARS,
    step=1,
    value=None,
    key="profile_years",
)
subspecialty = st.text_input(
    "Subspecialty (optional)",
    max_chars=MAX_SUBSPECIALTY_CHARS,
    key="profile_subspecialty",
    placeholder="e.g. thoracic, neuro, musculoskeletal",
)
if st.button("Save and continue", key="profile_save", type="primary"):
    try:
        profile = validate_profile(role, year, years, subspecialty)
    except ProfileError as exc:
        st.error(str(exc))
    else:
        with db_session() as session:
            reader, _ = load_reader(session, user)
            save_profile(session=session, reader=reader, profile=profile)
        st.session_state.pop("_step", None)
        st.rerun()
