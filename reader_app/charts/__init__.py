"""Altair chart builders for the analyst's figures, and their PNG/SVG rendering.

Builders take the plain frames of reader_app.analysis.chart_data and return
``alt.Chart`` objects with the data inline, so the same spec shows in the
app, renders to PNG/SVG offline through vl-convert, and goes into the static
report. No Streamlit here.
"""

from reader_app.charts.builders import (
    case_matrix_chart,
    group_split_chart,
    metric_bars_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
)
from reader_app.charts.render import chart_png, chart_svg, spec_json

__all__ = [
    "case_matrix_chart",
    "chart_png",
    "chart_svg",
    "group_split_chart",
    "metric_bars_chart",
    "reliability_chart",
    "response_profile_chart",
    "risk_coverage_chart",
    "spec_json",
]
