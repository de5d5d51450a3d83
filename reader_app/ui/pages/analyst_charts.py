"""The analyst's figures: response profile, reliability, risk-coverage, reader groups.

Each chart comes with PNG, SVG and the CSV behind it (ui/components/charts.py).
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.chart_data import reliability, response_profile, risk_coverage
from reader_app.analysis.leaderboard import LABELS, METRICS
from reader_app.charts import (
    group_split_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
)
from reader_app.ui.components.analysis_cache import (
    case_set,
    leaderboard,
    load_data,
    reader_groups,
    scoring_controls,
    staff_user,
)
from reader_app.ui.components.charts import chart_panel

user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Charts")
cases = case_set(data, controls)
if cases is None:
    st.stop()
assert cases is not None
board = leaderboard(data, cases, controls.params)
readers = controls.readers
stem = data.slug

st.subheader("Response profile")
st.caption(
    "Share of the cases per outcome: wrong answers by confidence (red), “I don't know” "
    "(grey), correct answers by confidence (green). Pools weigh each case once."
)
profile = response_profile(board, readers=readers)
chart_panel(
    response_profile_chart(profile),
    profile,
    name="Response profile",
    key="ch_profile",
    file_stem=f"{stem}-response-profile",
)

st.subheader("Reliability diagram")
st.caption("Accuracy at each confidence level; the dashed diagonal is p = L/4.")
rel = reliability(board, readers=readers)
chart_panel(
    reliability_chart(rel), rel, name="Reliability", key="ch_rel", file_stem=f"{stem}-reliability"
)

st.subheader("Risk-coverage")
st.caption(
    "Handing over every answer below a confidence threshold: how much is kept, and "
    "how often what is kept is wrong. Lower and further right is better."
)
rc = risk_coverage(board, readers=readers)
chart_panel(
    risk_coverage_chart(rc),
    rc,
    name="Risk-coverage",
    key="ch_rc",
    file_stem=f"{stem}-risk-coverage",
)

st.subheader("Reader groups")
left, right = st.columns(2)
merge = left.toggle("Pool training years as “trainees”", value=True, key="ch_merge")
chosen = right.selectbox(
    "Metric", list(METRICS), format_func=lambda m: LABELS[str(m)], key="ch_metric"
)
metric = str(chosen or METRICS[0])
groups = reader_groups(data, cases, controls.params, merge=merge)
if groups.empty:
    st.info("No reader is in the pool yet: there are no groups to compare.")
else:
    chart_panel(
        group_split_chart(groups, metric),
        groups[groups["metric"] == metric],
        name="Reader groups",
        key="ch_groups",
        file_stem=f"{stem}-groups-{metric}",
    )
