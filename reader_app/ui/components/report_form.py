"""The report form's fields for report-mode cases: Findings, Impression, confidence, IDK.

Drawn inside the exam's one form (``answer_form.answer_form_container``), so a
report gets what a diagnosis gets: every field sent together with the submit,
the draft kept in the tab, Ctrl+Enter, the active-time count. Fields:
``findings`` and ``impression`` (text areas), ``likert`` (0-4) and ``idk``,
as in the diagnosis form (each a new widget per drawing of the form,
``answer_form.form_field``); the submit reads them as ``FormValues.findings`` and
``FormValues.impression``.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from reader_app.reports.answers import MAX_REPORT_CHARS
from reader_app.ui.components.answer_form import confidence_fields, form_field


def report_fields(*, likert_labels: Sequence[str] | None = None) -> None:
    with form_field("findings") as key:
        st.text_area(
            "Findings",
            key=key,
            max_chars=MAX_REPORT_CHARS,
            height=180,
            placeholder="What you see, organ by organ",
        )
    with form_field("impression") as key:
        st.text_area(
            "Impression",
            key=key,
            max_chars=MAX_REPORT_CHARS,
            height=110,
            placeholder="The conclusion: the most important finding first",
        )
    confidence_fields(likert_labels=likert_labels)
