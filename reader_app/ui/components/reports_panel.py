"""The leaderboard's Reports tab: rubric scores (0-40), human pool vs models, tier chart.

Scoring runs the bootstrap, so it is cached here (UI layer), keyed by the
rubric frame's content and the bootstrap settings.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from reader_app.analysis.data import ANALYSIS_ROLES
from reader_app.analysis.report_scores import (
    ReportBoard,
    board_of,
    display_comparisons,
    display_reports,
    grader_agreement,
    histogram_frame,
    report_export,
    tier_counts,
)
from reader_app.charts.rubric import score_histogram_chart, tier_distribution_chart
from reader_app.core.auth import require_role
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.grading.rubric_grades import report_score_frame
from reader_app.ui.components.charts import chart_panel
from reader_app.ui.components.safe_text import labelled
from reader_app.ui.context import SignedIn, db_session, load_reader
from scoring import ScoringParams


@st.cache_data(max_entries=16, show_spinner=False)
def _board(digest: str, frame: pd.DataFrame, n_boot: int, seed: int, pending: int) -> ReportBoard:
    del digest  # the cache key; the frame itself is hashed by Streamlit too
    return board_of(frame, n_boot=n_boot, seed=seed, pending=pending)


def load_reports(user: SignedIn, params: ScoringParams) -> ReportBoard:
    with db_session() as session:
        actor, study = load_reader(session, user)
        require_role(actor, *ANALYSIS_ROLES)
        assert study.id is not None
        frame, pending = report_score_frame(session=session, study_id=study.id)
    digest = hashlib.sha256(frame.to_csv(index=False).encode("utf-8")).hexdigest()
    return _board(digest, frame, params.n_boot, params.seed, pending)


def reports_panel(board: ReportBoard, *, slug: str) -> None:
    if board.empty:
        st.info(
            "No graded reports yet. Reports are graded 0-40 by the study's rubric judge, "
            "or its two judges when they agree (`readerstudy judge-reports`), or by an "
            "adjudicator on the Adjudication page."
        )
        return
    st.subheader("Report rubric (0-40), 95% bootstrap CIs")
    st.caption(
        "Ranked by the share of the ceiling over every report case, as Bench 2 counts: an "
        '"I don\'t know", failed or missing report counts 0 (Fail). Total of the ceiling '
        "(40 per report case) · mean and % of the ceiling [95% paired case-bootstrap CI] · "
        "SD · median · range · reports per tier (Exceptional 38-40, Strong 32-37, Solid "
        "24-31, Mixed 16-23, Poor 8-15, Fail 0-7); then, secondary, the judged reports "
        "alone. The human pool averages the readers' scores on each case."
        + (
            f" {board.pending} report(s) still wait for a score and are left out."
            if board.pending
            else ""
        )
    )
    shown = display_reports(board)
    st.dataframe(shown, column_config=labelled(shown), hide_index=True, key="rp_table")
    st.download_button(
        "Report scores CSV (one row per report case and responder)",
        data=spreadsheet_csv(report_export(board.frame)),
        file_name=f"{slug}-reports.csv",
        mime="text/csv",
        key="rp_csv",
        on_click="ignore",
    )
    st.subheader("Model minus human pool")
    if board.scores.comparisons.empty:
        st.info("Needs graded reports from readers and from at least one model run.")
    else:
        st.caption(
            "Mean difference on the reports both have [95% CI]; p from the paired sign-flip "
            "permutation test on per-case scores."
        )
        diff = display_comparisons(board)
        st.dataframe(diff, column_config=labelled(diff), hide_index=True, key="rp_diff")
    tiers = tier_counts(board)
    chart_panel(
        tier_distribution_chart(tiers),
        tiers,
        name="Report tiers",
        key="rp_tiers",
        file_stem=f"{slug}-report-tiers",
    )
    histogram = histogram_frame(board)
    chart_panel(
        score_histogram_chart(histogram),
        histogram,
        name="Report score histograms",
        key="rp_hist",
        file_stem=f"{slug}-report-histograms",
    )


def agreement_panel(user: SignedIn) -> None:
    """Judge-judge and judge-adjudicator agreement on the reports both scored."""
    with db_session() as session:
        actor, study = load_reader(session, user)
        require_role(actor, *ANALYSIS_ROLES)
        assert study.id is not None
        table = grader_agreement(session=session, study_id=study.id)
    st.subheader("Grader agreement")
    if table.empty:
        st.info("No report has two scores yet (two judges, or a judge and an adjudicator).")
        return
    st.caption(
        "On the reports both graders scored: ICC(2,1) (two-way random, absolute agreement) "
        "on the 0-40 scores, quadratic-weighted kappa on the six ordered tiers, and the mean "
        "absolute difference. A judge against the adjudicator covers the reports the judges "
        "split on."
    )
    st.dataframe(table, column_config=labelled(table), hide_index=True, key="rp_agreement")
