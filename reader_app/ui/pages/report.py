"""A one-click static HTML report (tables and charts, no server needed to open it)."""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.html_report import render_report
from reader_app.ui.components.analysis_cache import (
    load_data,
    scoring_controls,
)
from reader_app.ui.components.audit_panel import load_audits
from reader_app.ui.components.reports_panel import load_reports
from reader_app.ui.context import staff_user

user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Study report")
st.write(
    "One HTML file with the leaderboard, the model-minus-pool differences, every chart, the "
    "report rubric scores (if the study collects reports) and the scoring parameters. It "
    "loads nothing from the network: open it anywhere, attach it, print it."
)
cases = data.graded_cases() if controls.graded_only and data.n_pending else None
reports = load_reports(user, controls.params)
audits = load_audits(user, controls.params)
st.download_button(
    "Build and download the report (HTML)",
    data=lambda: render_report(
        data,
        controls.params,
        case_ids=cases,
        readers=controls.readers,
        reports=reports,
        audits=audits.reports,
        audit_humans=audits.human,
    ),
    file_name=f"{data.slug}-report.html",
    mime="text/html",
    key="report_html",
    type="primary",
    on_click="ignore",
    icon=":material/description:",
)
st.caption("Building it runs the bootstrap and renders every chart: allow a few seconds.")
