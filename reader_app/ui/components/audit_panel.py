"""The causal grounding audit on the analyst page: per model the five arms side by side,
the occlusion effect with its CI, the category, and the accuracy-by-arm chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from reader_app.analysis.data import ANALYSIS_ROLES
from reader_app.charts import audit_arms_chart
from reader_app.core.auth import require_role
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.grounding_audit.figures import has_audit
from reader_app.grounding_audit.view import (
    audit_caption,
    audit_params,
    audit_table,
    chart_frame,
    human_grounding,
    study_audits,
    summary_table,
)
from reader_app.ui.components.charts import chart_panel
from reader_app.ui.components.safe_text import labelled
from reader_app.ui.context import SignedIn, db_session, load_reader
from scoring import ScoringParams


@dataclass(frozen=True)
class Audits:
    reports: list[dict[str, Any]]
    human: dict[str, float]


def load_audits(user: SignedIn, params: ScoringParams) -> Audits:
    with db_session() as session:
        actor, study = load_reader(session, user)
        require_role(actor, *ANALYSIS_ROLES)
        assert study.id is not None
        if not has_audit(session=session, study_id=study.id):
            return Audits([], {})  # one indexed look: most studies have no audit
        reports = study_audits(session=session, study_id=study.id, params=audit_params(params))
        human = human_grounding(session=session, study_id=study.id) if reports else {}
    return Audits(reports, human)


def audit_panel(audits: Audits, *, slug: str) -> None:
    if not audits.reports:
        return  # a study without an audit shows nothing here
    st.subheader("Causal grounding audit")
    st.caption(audit_caption(audits.human))
    summary = summary_table(audits.reports)
    st.dataframe(summary, column_config=labelled(summary), hide_index=True, key="ga_table")
    st.download_button(
        "Download the audit (CSV)",
        data=spreadsheet_csv(audit_table(audits.reports)),
        file_name=f"{slug}-audit-grounding.csv",
        mime="text/csv",
        key="ga_csv",
    )
    frame = chart_frame(audits.reports, audits.human)
    chart_panel(
        audit_arms_chart(frame),
        frame,
        name="Accuracy by audit arm",
        key="ga_chart",
        file_stem=f"{slug}-audit-grounding",
    )
