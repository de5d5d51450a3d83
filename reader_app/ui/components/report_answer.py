"""Which cases ask for a report (Findings + Impression) instead of a diagnosis.

The case panel (components/case_panel.py) draws the report's fields when
``is_report_case`` says so; the submit's value carries both texts.
"""

from __future__ import annotations

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.study.case_reports import answer_mode
from reader_app.ui.context import db_session

MODES_KEY = "_answer_modes"  # public id -> answer mode, read once per case and session


def is_report_case(case: CaseView) -> bool:
    modes: dict[str, str] = st.session_state.setdefault(MODES_KEY, {})
    if case.public_id not in modes:
        with db_session() as session:
            modes[case.public_id] = answer_mode(session=session, case_public_id=case.public_id)
    return modes[case.public_id] == "report"
