"""Model runs: what has been imported or run, and importing a file of model outputs.

Service: reader_app.analysis.model_runs (runs.importers.import_run_file, as
`readerstudy import-run`, then the automatic grading pass; per run its tokens,
cost and latency; per group of repeat runs their mean, SD and agreement).
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.model_runs import import_model_file, list_runs, repeat_summary
from reader_app.analysis.scored_study import shared_run_usage
from reader_app.core.auth import AuthError
from reader_app.core.upload_limits import RUN_UPLOAD_MB
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.components.safe_text import show_table
from reader_app.ui.components.uploads import stored_upload
from reader_app.ui.context import db_session, load_reader, staff_user

user = staff_user("analyst")
state = st.session_state
PAGE = "model_runs"  # its flash messages


def _import() -> None:
    from reader_app.runs.import_writer import RunImportError  # with the importers, on a click

    upload = state.get("runs_file")
    if upload is None:
        flash(PAGE, "error", "Choose a file first.")
        return
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            summary, graded = import_model_file(
                session=session,
                actor=actor,
                data=stored_upload(upload).path,  # the file on disk, not a copy in memory
                filename=upload.name,
                name=state.get("runs_name"),
                group=state.get("runs_group"),
            )
        except (RunImportError, AuthError, ValueError, FileNotFoundError) as exc:
            flash(PAGE, "error", f"Import refused, nothing stored: {exc}")
            return
    who = ", ".join([*summary.runs, *summary.readers])
    flash(
        PAGE,
        "success",
        f"Imported {summary.format}: {who}; {summary.added} added, {summary.skipped} already "
        f"present. {graded}",
    )


with db_session() as session:
    analyst, study = load_reader(session, user)
    usage = shared_run_usage(session=session, actor=analyst)  # once per data version
    runs = list_runs(session=session, actor=analyst, usage=usage)
    repeats = repeat_summary(session=session, study_id=study.id or 0) if not runs.empty else None

st.title("Model runs")
show_flash(PAGE)
if runs.empty:
    st.info("No model runs yet: import a file below, or use `readerstudy run-model`.")
else:
    show_table(runs, key="runs_table")
    st.caption(
        "Tokens as the provider reported them (reasoning tokens are part of completion "
        "tokens; cached tokens part of prompt tokens). Cost: the provider's, else priced at "
        "the run's --price-in/--price-out (cost_source says which); cost per correct answer "
        "counts graded answers only. Latency p50/p95 per call; a batch reply has none."
    )
    if repeats is not None and not repeats.empty:
        st.subheader("Repeat runs")
        st.caption(
            "Each group's repeats (run-model --repeats N): mean and SD of their scores, "
            "Fleiss' kappa on correct / wrong / IDK, the share of cases with identical "
            "verdicts, identical Likert and the Likert ICC(2,1)."
        )
        show_table(repeats, key="repeats_table")

st.subheader("Import model outputs")
st.caption(
    "JSONL or CSV with case_id and the model's answer (diagnosis + likert, or the raw reply), "
    "or a RadLE long-master CSV; see docs/model-runs.md. All rows or none are stored; exact "
    "key matches are graded at once, the rest go to adjudication."
)
st.file_uploader(
    "File",
    type=["jsonl", "ndjson", "csv"],
    key="runs_file",
    max_upload_size=RUN_UPLOAD_MB,  # the widget then says the real cap, not Streamlit's 500MB
)
left, right = st.columns(2)
left.text_input("Run name (when the file has no responder column)", key="runs_name")
right.text_input("Group / provider (optional)", key="runs_group")
st.button("Import", key="runs_import", type="primary", on_click=_import)
