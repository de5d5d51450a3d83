"""The exam page's report-mode block: which cases ask a report, and its form.

Kept apart from the diagnosis form so the exam page needs one branch only:
``is_report_case`` picks the block and ``report_form`` draws it inside the
exam's one form; the page's submit reads its texts from ``FormValues``.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from reader_app.exam.config import ExamConfig
from reader_app.exam.next_case import CaseView
from reader_app.reports.cases import answer_mode
from reader_app.ui.components.answer_form import (
    FormValues,
    answer_form_container,
    location_fields,
    submit_button,
)
from reader_app.ui.components.report_form import report_fields
from reader_app.ui.context import db_session

MODES_KEY = "_answer_modes"  # public id -> answer mode, read once per case and session


def is_report_case(case: CaseView) -> bool:
    modes: dict[str, str] = st.session_state.setdefault(MODES_KEY, {})
    if case.public_id not in modes:
        with db_session() as session:
            modes[case.public_id] = answer_mode(session=session, case_public_id=case.public_id)
    return modes[case.public_id] == "report"


def report_form(
    case: CaseView, config: ExamConfig, on_submit: Callable[[FormValues], None]
) -> None:
    """Findings, Impression, confidence, IDK and the submit button for one report case."""
    with answer_form_container(case.public_id):
        report_fields(likert_labels=config.likert_labels)
        if config.grounding:
            location_fields(required=config.grounding_required)
        submit_button(on_submit, submit_label="Submit report", enter_submits=False)
