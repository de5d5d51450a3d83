"""Exports for analysts and coordinators: responses, audit log, MRMC, reports, runs, aid.

The same files as `readerstudy export` (reader_app.analysis.exports), with the
scoring parameters of the sidebar in their param_* columns. A visit builds none
of them: each button carries a deferred builder (exports.deferred_export) that
Streamlit runs, off the page script, when it is pressed; the page only says up
front which export cannot be made yet (analysis_cache.export_refusal, from the
shared scored study).
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.exports import FORMATS, MIME, deferred_export, file_name
from reader_app.ui.components.analysis_cache import export_refusal, load_data, scoring_controls
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import app_engine, db_session, load_reader, staff_user

DESCRIPTIONS = {
    "responses": "Responses: the tidy frame, one row per (responder, case).",
    "audit": "Audit log: every recorded action of the study, oldest first.",
    "mrmc": "MRMC long format (reader, case, modality, score, truth; the diagnosis rows) "
    "for iMRMC and MRMCaov.",
    "reports": "Reports: every report answer, judged or not, with its text, each judge's score, "
    "the adjudicator's grade and the final 0-40 score (the analyst's copy adds the reference).",
    "runs": "Model runs: per run its tokens (prompt, completion, reasoning, cached), cost, "
    "cost per correct answer and latency p50/p95.",
    "repeats": "Repeat runs: per group of `run-model --repeats N`, the mean and SD of each "
    "metric and the run-to-run agreement.",
    "aid": "AI aid: the switch per (reader, aided case) of a study with an aided arm.",
}

user = staff_user("analyst", "coordinator")
controls = scoring_controls()

st.title("Exports")
st.caption(
    "Every export ends with param_* columns: the scoring-spec version and the parameters in "
    "the sidebar (Parquet files carry them as metadata too). See docs/analysis.md for columns. "
    "Each file is built when you press its button (the button turns busy meanwhile): from "
    "the data at that moment."
)
fmt = st.radio("Format", FORMATS, horizontal=True, key="ex_format")
engine = app_engine()
with db_session() as session:
    _, study = load_reader(session, user)
    data = load_data(user)
    for what, text in DESCRIPTIONS.items():
        st.subheader(what.upper() if what == "mrmc" else what.capitalize())
        st.caption(text)
        refused = export_refusal(what, data, controls.params)
        if refused is not None:
            st.warning("Not available yet: " + escape_markdown(refused))
            continue
        st.download_button(
            f"Download {what} ({fmt.upper()})",
            data=deferred_export(
                engine,
                what,
                fmt,
                study_id=data.study_id,
                params=controls.params,
                with_reference=user.role == "analyst",  # the reference is the analyst's
            ),
            file_name=file_name(study.slug, what, fmt),
            mime=MIME[fmt],
            key=f"ex_{what}",
            on_click="ignore",
        )
