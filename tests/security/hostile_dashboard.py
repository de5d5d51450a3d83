"""A stand-in dashboard, served in the Chromium test: stored answers through safe_text.

Run with ``streamlit run`` and READERSTUDY_DATABASE_URL pointing at a test
database. With ``?control=1`` it also renders every answer through plain
``st.write`` (markdown) and raw ``unsafe_allow_html``: the negative control that
proves the test's checks see injected markup when there is some.
"""

from __future__ import annotations

import os

import streamlit as st
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.models import Study
from reader_app.results import tidy_responses
from reader_app.ui.components.safe_text import (
    escape_markdown,
    html_text,
    show_table,
    show_text,
)

engine = make_engine(os.environ["READERSTUDY_DATABASE_URL"])
with Session(engine) as session:
    study = session.exec(select(Study)).first()
    assert study is not None and study.id is not None
    frame = tidy_responses(session=session, study_id=study.id)
engine.dispose()

st.title("Answers")
show_table(frame, key="answers")
for i, row in enumerate(frame.itertuples()):
    with st.container(key=f"answer-{i}"):
        with st.container(key=f"text-{i}"):
            show_text(row.diagnosis)
        with st.container(key=f"md-{i}"):
            st.markdown(escape_markdown(row.diagnosis))
        with st.container(key=f"caption-{i}"):
            st.caption(escape_markdown(row.responder) + " · " + escape_markdown(row.diagnosis))
        with st.container(key=f"html-{i}"):
            st.html(html_text(row.diagnosis))
        if st.query_params.get("control") == "1":
            with st.container(key=f"unsafe-{i}"):
                st.write(row.diagnosis)
                st.markdown(row.diagnosis, unsafe_allow_html=True)
st.text("end-of-page")
