"""The per-case matrix: which cases humans get and models miss, and the reverse.

Difficulty comes from the human pool (reader_app.analysis.case_matrix).
"""

from __future__ import annotations

import streamlit as st

from reader_app.analysis.case_matrix import SPLITS
from reader_app.charts import case_matrix_chart
from reader_app.ui.components.analysis_cache import (
    case_set,
    load_data,
    per_case,
    scoring_controls,
    staff_user,
)
from reader_app.ui.components.charts import chart_panel
from reader_app.ui.components.safe_text import show_table

user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Per-case matrix")
cases = case_set(data, controls)
if cases is None:
    st.stop()
assert cases is not None
matrix = per_case(data, cases, controls.params)
st.caption(
    "Difficulty = 1 − the share of pooled readers who got the case right. Humans “get” a "
    "case when at least half the pooled readers are right; models, when at least half the "
    "model runs are."
)
cells = matrix.cells
if not controls.readers:
    cells = cells[cells["kind"] == "model"]
chart_panel(
    case_matrix_chart(cells, matrix.cases),
    cells,
    name="Per-case matrix",
    key="pc_matrix",
    file_stem=f"{data.slug}-per-case",
)

counts = matrix.cases["split"].value_counts()
cols = st.columns(4)
for col, name in zip(cols, SPLITS[:4], strict=True):
    col.metric(name, int(counts.get(name, 0)))
if not data.responders("model"):
    st.info("No model runs yet: every case is listed as “no model runs”.")
for name in SPLITS[:2]:
    st.subheader(name.capitalize())
    rows = matrix.split(name)
    if rows.empty:
        st.caption("None.")
    else:
        show_table(rows.drop(columns=["split"]), key=f"pc_{SPLITS.index(name)}")
st.subheader("All cases, hardest first")
show_table(matrix.cases, key="pc_all")
