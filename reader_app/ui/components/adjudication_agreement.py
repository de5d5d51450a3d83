"""Agreement between the two independent adjudicators (two-adjudicator mode)."""

from __future__ import annotations

import math

import streamlit as st

from reader_app.grading.adjudication import AgreementReport


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def agreement_panel(report: AgreementReport) -> None:
    with st.expander("Agreement between adjudicators"):
        if report.n_items == 0:
            st.caption("No answer has two independent decisions yet.")
            return
        a, b, c = st.columns(3)
        a.metric("Cohen kappa", _fmt(report.kappa))
        b.metric("Double-graded answers", report.n_items)
        c.metric("Disagreements", report.n_items - report.n_agree)
        st.caption(
            f"{report.n_resolved_by_third} resolved by a third adjudicator, "
            f"{report.n_awaiting_third} waiting for one."
        )
        for pair in report.pairs:
            st.text(
                f"{pair.adjudicators[0]} / {pair.adjudicators[1]}: kappa {_fmt(pair.kappa)} "
                f"over {pair.n_items} answers ({pair.n_agree} agreed)"
            )
