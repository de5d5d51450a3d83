"""Chart builders for the analyst's figures, and their PNG/SVG rendering.

Builders take the plain frames of reader_app.analysis.chart_data and return
Vega-Lite specs (plain dicts, reader_app/charts/vl.py) with the data inline,
so the same spec shows in the app, renders to PNG/SVG offline through
vl-convert, and goes into the static report. No Streamlit here.
"""

from reader_app.charts.audit import audit_arms_chart
from reader_app.charts.builders import (
    accuracy_grounding_chart,
    case_matrix_chart,
    group_split_chart,
    metric_bars_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
)
from reader_app.charts.render import chart_png, chart_svg, spec_json
from reader_app.charts.rubric import tier_distribution_chart

__all__ = [
    "accuracy_grounding_chart",
    "audit_arms_chart",
    "case_matrix_chart",
    "chart_png",
    "chart_svg",
    "group_split_chart",
    "metric_bars_chart",
    "reliability_chart",
    "response_profile_chart",
    "risk_coverage_chart",
    "spec_json",
    "tier_distribution_chart",
]
