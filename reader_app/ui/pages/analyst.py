"""The analyst's leaderboard: human pool, group pools, readers, model runs; model minus pool.

Two tabs: Diagnosis (RadLE metrics) and Reports (the Bench 2 rubric, 0-40).

Numbers come from reader_app.analysis.leaderboard (scoring.score_responses,
as `readerstudy score`), cached by data fingerprint in the UI layer. The page
is a list of sections (functions of the board); a tab bar can hold them, with
more tabs beside them, without changing any section.
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.chart_data import metric_bars
from reader_app.analysis.data import StudyData, has_repeat_runs
from reader_app.analysis.leaderboard import Leaderboard, display_differences, display_mrmc
from reader_app.analysis.leaderboard_view import SORTS, leaderboard_html
from reader_app.charts import metric_bars_chart
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.ui.components.analysis_cache import (
    Controls,
    case_set,
    kept,
    leaderboard_first_paint,
    load_data,
    metrics_table,
    open_tab,
    scoring_controls,
)
from reader_app.ui.components.audit_panel import audit_panel, load_audits
from reader_app.ui.components.charts import chart_panel
from reader_app.ui.components.reports_panel import agreement_panel, load_reports, reports_panel
from reader_app.ui.components.safe_text import escape_markdown, show_table
from reader_app.ui.context import db_session, staff_user

ALL_COHORTS = "(all cohorts)"
MRMC_CAPTION = (
    "Model minus human pool [95% CI] and two-sided p, with the readers and the cases as "
    "random samples and the model fixed (Gallas' U-statistic, as iMRMC computes it; "
    "docs/analysis.md): what a reviewer of a human-vs-AI comparison asks for. The default "
    "case bootstrap above holds the readers fixed."
)


def metrics_section(data: StudyData, board: Leaderboard, controls: Controls) -> None:
    st.subheader("RadLE metrics, 95% bootstrap CIs")
    st.caption(
        "RadLE-C confidence-weighted index (0-2000) · A accuracy · R reliability at Likert ≥ "
        f"{controls.params.tau_high} (n/a: nothing answered that high) · S safety (0-100) · "
        f"H handover readiness (0-100, RadLE-H {controls.params.h_variant}, "
        f"{controls.params.h_aggregate} mean). Each cell: the value, and below it the 95% paired "
        "case-bootstrap CI. Left edge: white the human pool, pale blue its group pools, "
        "blue the readers, orange the model runs."
        + (
            f" G grounding rate · GA grounded accuracy · U ungrounded correct share, over the "
            f"{len(board.grounded_case_ids)} case(s) with a reference region (group pools: n/a)."
            if board.has_grounding
            else ""
        )
    )
    # kept: the Reports tab and the other pages do not draw them
    by = st.selectbox(
        "Sort by", list(SORTS), format_func=lambda k: SORTS[str(k)], width=260,
        **kept("lb_sort", next(iter(SORTS)), list(SORTS)),
    )  # fmt: skip
    cohort = None
    if board.cohorts:  # RadLE-style: frontier, open-weight, medical...; pooled rows per cohort
        cohorts = [ALL_COHORTS, *board.cohorts]
        chosen = st.selectbox(
            "Cohort", cohorts, width=260, **kept("lb_cohort", ALL_COHORTS, cohorts),
            help="show one cohort's model runs (and its pooled row) beside the human pool",
        )  # fmt: skip
        cohort = None if chosen in (None, ALL_COHORTS) else str(chosen)
    with st.container(key="lb_table"):
        st.html(
            leaderboard_html(
                board, readers=controls.readers, by=str(by or "radle_c"), cohort=cohort
            )
        )
    st.download_button(
        "Leaderboard CSV (numbers, CIs, parameters)",
        data=lambda: spreadsheet_csv(  # made on the click, not on every page run
            board.arms(readers=controls.readers, cohort=cohort, cohort_pools=True).assign(
                **{f"param_{k}": v for k, v in controls.params.to_dict().items()}
            )
        ),
        file_name=f"{data.slug}-leaderboard.csv",
        mime="text/csv",
        key="lb_csv",
        on_click="ignore",
    )


def differences_section(data: StudyData, board: Leaderboard, controls: Controls) -> None:
    st.subheader("Model minus human pool")
    if board.differences.empty:
        st.info(
            "No model run to compare yet."
            if not data.responders("model")
            else "Set the bootstrap replicates above 0 for differences, CIs and p-values."
        )
        return
    st.caption(
        "Difference [95% paired bootstrap CI]; p from the paired sign-flip permutation test on "
        "per-case points (the RadLE-C difference)."
    )
    metrics_table(display_differences(board), key="lb_diff")


def mrmc_section(data: StudyData, board: Leaderboard, controls: Controls) -> None:
    st.subheader("Model vs reader panel (readers and cases random)")
    if board.mrmc.empty:
        st.info("No model run to compare yet.")
        return
    st.caption(MRMC_CAPTION)
    metrics_table(display_mrmc(board), key="lb_mrmc")


def radle_c_section(data: StudyData, board: Leaderboard, controls: Controls) -> None:
    st.subheader("RadLE-C")
    bars = metric_bars(board, "radle_c", readers=controls.readers)
    chart_panel(
        metric_bars_chart(bars), bars, name="RadLE-C", key="lb_c", file_stem=f"{data.slug}-radle-c"
    )


def repeats_section(data: StudyData, board: Leaderboard, controls: Controls) -> None:
    """Groups of repeat runs (run-model --repeats N): mean, SD and run-to-run agreement
    on the leaderboard's case set; nothing when the study has none."""
    with db_session() as session:
        if not has_repeat_runs(session=session, study_id=user.study_id):
            return  # one indexed look: most studies have no repeat runs
        # imported only now: it brings the run recorder and scoring.io (0.2 s), which a
        # page run without repeat runs does not need (issue 43: the sign-in's first run)
        from reader_app.analysis.model_runs import repeat_summary

        table = repeat_summary(session=session, study_id=user.study_id, case_ids=board_cases)
    if table.empty:
        return
    st.subheader("Repeat runs")
    st.caption(
        "Mean and SD of each group's repeats; Fleiss' kappa on correct / wrong / IDK, the "
        "share of cases with identical verdicts, identical Likert, Likert ICC(2,1)."
    )
    show_table(table, key="lb_repeats")


SECTIONS = (metrics_section, differences_section, mrmc_section, radle_c_section, repeats_section)

user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Leaderboard")
st.caption(
    f"{len(data.case_ids)} scored case(s) · {len(data.responders('human'))} reader(s) · "
    f"{len(data.responders('model'))} model run(s) · scoring spec "
    f"{controls.params.to_dict()['scoring_spec_version']}"
)
# only the open tab is computed and drawn (open_tab): the Reports tab's grades, their
# board and the agreement table cost every Diagnosis visit a third of its page run, and
# the browser drew both tabs (issue 43, second visits)
opened, tab = open_tab(["Diagnosis", "Reports"], "lb_tab")
if opened == "Reports":
    with tab:
        reports_panel(load_reports(user, controls.params), slug=data.slug)
        agreement_panel(user)
    st.stop()
with tab:
    cases = case_set(data, controls)
    if cases is None:
        st.stop()
    assert cases is not None

    def first_paint(quick: Leaderboard) -> None:  # point estimates while the bootstrap runs
        st.subheader("RadLE metrics")
        st.caption(f"Point estimates; the 95% CIs are being computed ({controls.params.n_boot} "
                   "paired bootstrap resamples)…")  # fmt: skip
        st.html(leaderboard_html(quick, readers=controls.readers, by="radle_c", cohort=None))

    board = leaderboard_first_paint(data, cases, controls.params, first_paint)
    board_cases = tuple(cases)
    for note in board.notes:
        st.info(escape_markdown(note))
    for section in SECTIONS:
        section(data, board, controls)
    audit_panel(load_audits(user, controls.params), slug=data.slug)
