"""Which cases ask for a report (Findings + Impression) instead of a diagnosis.

The case panel (components/case_panel.py) draws the report's fields when
``is_report_case`` says so; the submit's value carries both texts. The mode is read
once per case and browser session, into the exam's state (``ExamState.answer_mode``),
which the commit path reads too.
"""

from __future__ import annotations

from reader_app.exam.next_case import CaseView
from reader_app.study.case_reports import answer_mode
from reader_app.ui.components.exam_session import exam_state
from reader_app.ui.context import db_session


def is_report_case(case: CaseView) -> bool:
    def read() -> str:
        with db_session() as session:
            return answer_mode(session=session, case_public_id=case.public_id)

    return exam_state().answer_mode(case.public_id, read) == "report"
