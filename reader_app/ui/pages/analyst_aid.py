"""AI aid: what the model's answer did to the readers (SCORING.md section 10; docs/aided.md).

Service: reader_app.analysis.aid_view (scoring.score_with_aid). Harmful and helpful
switch rates, net benefit and the confidence change per reader and for the pool,
aided minus unaided RadLE-A and RadLE-C with bootstrap CIs (and, for the pool, readers
and cases random), the pool by group, and a chart of the switch rates by the model's
stated confidence.
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.aid_view import aid_figures
from reader_app.charts.builders import CELL_COLORS
from reader_app.ui.components.analysis_cache import case_set, load_data, scoring_controls
from reader_app.ui.components.safe_text import show_table
from reader_app.ui.context import staff_user
from scoring import FrameError

user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("AI aid")
cases = case_set(data, controls)
if cases is None:
    st.stop()
assert cases is not None
try:
    figures = aid_figures(data, cases, controls.params)
except FrameError as exc:
    st.info(f"Not available yet: {exc}")
    st.stop()
if figures is None:
    st.info(
        "This study has no AI-aided answers: set `aid` in study.toml (docs/aided.md) and "
        "readers answer each case again with the model's answer beside them."
    )
    st.stop()
assert figures is not None
st.caption(
    "Harmful switch: a right answer given up when the model was wrong (automation bias); "
    "helpful switch: a wrong answer turned right when the model was right; net benefit: "
    "(aided correct − unaided correct) / aided cases. The pool weighs each aided case once."
)
show_table(figures.readers, key="aid_readers")
st.subheader("Aided minus unaided, the pool")
st.caption(
    "The bootstrap resamples cases (readers fixed); MRMC takes readers and cases as random "
    "(Gallas' U-statistic, the two arms paired within reader and case; normal 95% CI and p). "
    "MRMC needs at least two readers and two cases."
)
show_table(figures.comparison, key="aid_comparison")
st.subheader("Switches by the model's confidence")
chart = figures.by_confidence.set_index("model_confidence")[
    ["harmful_switch_rate", "helpful_switch_rate"]
].rename(columns={"harmful_switch_rate": "Harmful", "helpful_switch_rate": "Helpful"})
st.bar_chart(  # harmful in the charts' "wrong" orange, helpful in their "correct" blue
    chart,
    stack=False,
    x_label="Model's confidence (Likert)",
    y_label="Switch rate",
    color=[CELL_COLORS["wrong"], CELL_COLORS["correct"]],
)
show_table(figures.by_confidence, key="aid_confidence")
if len(figures.by_group):
    st.subheader("By reader group")
    show_table(figures.by_group, key="aid_groups")
st.subheader("Per reader and case")
show_table(figures.switches, key="aid_switches")
