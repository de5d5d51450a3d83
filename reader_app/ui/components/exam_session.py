"""The exam's one typed session object (reader_app.exam.state), kept in st.session_state."""

from __future__ import annotations

import streamlit as st

from reader_app.exam.state import ExamState

EXAM_KEY = "_exam"


def exam_state() -> ExamState:
    state = st.session_state.get(EXAM_KEY)
    if not isinstance(state, ExamState):
        state = st.session_state[EXAM_KEY] = ExamState()
    return state
