"""Exports for analysts and coordinators: responses, audit log, MRMC long format, reports.

The same files as `readerstudy export` (reader_app.analysis.exports), with the
scoring parameters of the sidebar in their param_* columns.
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.data import how_to_grade
from reader_app.analysis.exports import FORMATS, MIME, ExportError, export_bytes, file_name
from reader_app.ui.components.analysis_cache import scoring_controls
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import db_session, load_reader, staff_user
from scoring import FrameError, UngradedRowsError

DESCRIPTIONS = {
    "responses": "Responses: the tidy frame, one row per (responder, case).",
    "audit": "Audit log: every recorded action of the study, oldest first.",
    "mrmc": "MRMC long format (reader, case, modality, score, truth) for iMRMC and MRMCaov.",
    "reports": "Reports: every report answer, judged or not, with its text, each judge's score, "
    "the adjudicator's grade and the final 0-40 score (the analyst's copy adds the reference).",
}

user = staff_user("analyst", "coordinator")
controls = scoring_controls()

st.title("Exports")
st.caption(
    "Every export ends with param_* columns: the scoring-spec version and the parameters in "
    "the sidebar (Parquet files carry them as metadata too). See docs/analysis.md for columns."
)
fmt = st.radio("Format", FORMATS, horizontal=True, key="ex_format")
with db_session() as session:
    _, study = load_reader(session, user)
    for what, text in DESCRIPTIONS.items():
        st.subheader(what.upper() if what == "mrmc" else what.capitalize())
        st.caption(text)
        try:
            payload = export_bytes(
                what,
                fmt,
                session=session,
                study=study,
                params=controls.params,
                with_reference=user.role == "analyst",  # the reference is the analyst's
            )
        except (ExportError, FrameError) as exc:
            hint = f" {how_to_grade(study.slug)}" if isinstance(exc, UngradedRowsError) else ""
            st.warning("Not available yet: " + escape_markdown(str(exc) + hint))
            continue
        st.download_button(
            f"Download {what} ({fmt.upper()})",
            data=payload,
            file_name=file_name(study.slug, what, fmt),
            mime=MIME[fmt],
            key=f"ex_{what}",
            on_click="ignore",
        )
