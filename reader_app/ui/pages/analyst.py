"""The analyst's leaderboard: human pool, group pools, readers, model runs; model minus pool.

Numbers come from reader_app.analysis.leaderboard (scoring.score_responses,
as `readerstudy score`), cached by data fingerprint in the UI layer.
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.chart_data import metric_bars
from reader_app.analysis.leaderboard import display_differences, display_table
from reader_app.charts import metric_bars_chart
from reader_app.ui.components.analysis_cache import (
    case_set,
    leaderboard,
    load_data,
    metrics_table,
    scoring_controls,
    staff_user,
)
from reader_app.ui.components.charts import chart_panel
from reader_app.ui.components.safe_text import escape_markdown

user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Leaderboard")
st.caption(
    f"{len(data.case_ids)} scored case(s) · {len(data.responders('human'))} reader(s) · "
    f"{len(data.responders('model'))} model run(s) · scoring spec "
    f"{controls.params.to_dict()['scoring_spec_version']}"
)
cases = case_set(data, controls)
if cases is None:
    st.stop()
assert cases is not None
board = leaderboard(data, cases, controls.params)
for note in board.notes:
    st.info(escape_markdown(note))

st.subheader("RadLE metrics, 95% bootstrap CIs")
st.caption(
    "RadLE-C confidence-weighted index (0-2000) · A accuracy · R reliability at Likert ≥ "
    f"{controls.params.tau_high} (n/a: nothing answered that high) · S safety (0-100) · "
    "H handover readiness (0-100). Each cell: value [95% paired case-bootstrap CI]."
)
metrics_table(display_table(board, readers=controls.readers), key="lb_table")
st.download_button(
    "Leaderboard CSV (numbers, CIs, parameters)",
    data=board.arms(readers=controls.readers)
    .assign(**{f"param_{k}": v for k, v in controls.params.to_dict().items()})
    .to_csv(index=False),
    file_name=f"{data.slug}-leaderboard.csv",
    mime="text/csv",
    key="lb_csv",
    on_click="ignore",
)

st.subheader("Model minus human pool")
if board.differences.empty:
    st.info(
        "No model run to compare yet."
        if not data.responders("model")
        else "Set the bootstrap replicates above 0 for differences, CIs and p-values."
    )
else:
    st.caption(
        "Difference [95% paired bootstrap CI]; p from the paired sign-flip permutation test on "
        "per-case points (the RadLE-C difference)."
    )
    metrics_table(display_differences(board), key="lb_diff")

st.subheader("RadLE-C")
bars = metric_bars(board, "radle_c", readers=controls.readers)
chart_panel(
    metric_bars_chart(bars), bars, name="RadLE-C", key="lb_c", file_stem=f"{data.slug}-radle-c"
)
