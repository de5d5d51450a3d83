"""The chart specs are valid Vega-Lite, and the spec helpers write what Altair would.

The builders (reader_app/charts) write Vega-Lite as plain dicts, without
Altair on the server (docs/performance.md, Analyst memory). Altair stays a
test dependency: its bundled Vega-Lite schema checks every builder's spec, and
its own objects are the reference for the helpers in reader_app/charts/vl.py.
"""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import jsonschema
import pandas as pd
import pytest
from altair.vegalite.v6.schema.core import load_schema

from reader_app.analysis.case_matrix import case_matrix
from reader_app.analysis.chart_data import (
    group_split,
    metric_bars,
    reliability,
    response_profile,
    risk_coverage,
)
from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.charts import (
    accuracy_grounding_chart,
    case_matrix_chart,
    group_split_chart,
    metric_bars_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
    tier_distribution_chart,
)
from reader_app.charts.contrast import AA_LARGE, contrast
from reader_app.charts.render import spec
from reader_app.charts.theme import DARK_BACKGROUND, for_dark
from reader_app.charts.vl import SCHEMA_URL, field, layer, mark, secondary, values, when
from scoring import ScoringParams
from tests.reader_app.analysis.chart_frame import CASES
from tests.support.chart_colours import drawn_colours


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(load_schema())


def grounding_points() -> pd.DataFrame:
    def row(name: str, arm: str, series: str, acc: float, g: float) -> dict[str, Any]:
        return {
            "name": name,
            "arm": arm,
            "series": series,
            "text_only": series.endswith("text only"),
            "n_grounded": 4,
            "accuracy": acc,
            "accuracy_ci_low": acc - 0.1,
            "accuracy_ci_high": acc + 0.1,
            "grounding_rate": g,
            "grounding_rate_ci_low": max(g - 0.1, 0.0),
            "grounding_rate_ci_high": g + 0.1,
        }

    return pd.DataFrame(
        [
            row("Human pool", "pool", "human pool", 0.7, 0.5),
            row("R1", "reader", "reader", 0.6, 0.4),
            row("vlm", "model", "model run · text only", 0.5, 0.0),
        ]
    )


def every_figure(responses: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """One spec of each builder (two of the metric bars), from the small frame."""
    board = build_leaderboard(responses, CASES, ScoringParams(n_boot=20))
    matrix = case_matrix(responses, CASES, board.params)
    tiers = pd.DataFrame(
        {
            "name": ["human pool", "m1", "m1"],
            "kind": ["pool", "model", "model"],
            "tier": ["Strong", "Solid", "Fail"],
            "count": [2, 1, 1],
            "share": [1.0, 0.5, 0.5],
        }
    )
    no_pool = metric_bars(board, "radle_a").assign(pool_value=float("nan"))
    return {
        "metric bars": metric_bars_chart(metric_bars(board)),
        "metric bars, no pool line": metric_bars_chart(no_pool),
        "response profile": response_profile_chart(response_profile(board)),
        "reliability": reliability_chart(reliability(board)),
        "reliability, one in colour": reliability_chart(reliability(board), highlight="m1"),
        "risk-coverage": risk_coverage_chart(risk_coverage(board)),
        "risk-coverage, one in colour": risk_coverage_chart(risk_coverage(board), highlight="m1"),
        "groups": group_split_chart(group_split(responses, CASES, board.params), "radle_s"),
        "case matrix": case_matrix_chart(matrix.cells, matrix.cases),
        "grounding": accuracy_grounding_chart(grounding_points()),
        "tiers": tier_distribution_chart(tiers),
    }


def test_every_builder_writes_valid_vega_lite(
    frame: pd.DataFrame,
    validator: jsonschema.Draft7Validator,
) -> None:
    charts = every_figure(frame)
    for name, chart in charts.items():
        document = spec(chart)
        assert document["$schema"] == SCHEMA_URL
        errors = [e.message for e in validator.iter_errors(document)]
        assert errors == [], name
        dark = spec(for_dark(chart))  # as the app draws it
        assert [e.message for e in validator.iter_errors(dark)] == [], name
    # the check does fail on a spec Vega-Lite would refuse
    broken = spec(charts["tiers"]) | {"mark": {"type": "barr"}}
    assert list(validator.iter_errors(broken))


def test_the_helpers_write_what_altair_writes() -> None:
    data = pd.DataFrame({"name": ["a", "b"], "value": [1.0, float("nan")], "hi": [2, 3]})
    inline = values(data)
    assert inline["values"][1] == {"name": "b", "value": None, "hi": 3}  # NaN as null
    pick = alt.selection_point(fields=["name"], bind="legend", name="pick")
    base = alt.Chart(alt.Data(values=inline["values"]))  # type: ignore[no-untyped-call]
    bars = base.mark_bar(height={"band": 0.7}).encode(
        x=alt.X("value:Q", title=None, scale=alt.Scale(domain=[0, 2])),
        y=alt.Y("name:N", sort=["b", "a"]),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.1)),
        tooltip=[alt.Tooltip("hi:Q", format=".1f")],
    )
    rule = base.mark_rule(color="black").encode(x="value:Q", x2="hi:Q", y="name:N")
    expected = alt.layer(bars, rule).properties(width=300).to_dict(validate=False)
    mine = {
        "data": inline,
        "mark": mark("bar", height={"band": 0.7}),
        "encoding": {
            "x": field("value:Q", title=None, scale={"domain": [0, 2]}),
            "y": field("name:N", sort=["b", "a"]),
            "opacity": when("pick", 1.0, 0.1),
            "tooltip": [field("hi:Q", format=".1f")],
        },
    }
    ruled = {
        "data": inline,
        "mark": mark("rule", color="black"),
        "encoding": {"x": field("value:Q"), "x2": secondary("hi"), "y": field("name:N")},
    }
    # shared data moves up to the layered chart, as alt.layer does with one base chart
    assert spec(layer(mine, ruled, width=300)) == expected
    # different data objects stay with their layers
    apart = layer(mine, {**ruled, "data": values(data)}, width=300)
    assert "data" not in apart and all("data" in part for part in apart["layer"])


def test_every_line_and_label_keeps_3_to_1_on_paper_and_on_the_dark_page(
    frame: pd.DataFrame,
) -> None:
    """Lines, rules, whiskers, points, text and the responder scales of every figure, on
    white (downloads) and, through for_dark, on the app's background (WCAG 1.4.11)."""
    checked = 0
    for name, figure in every_figure(frame).items():
        dark = for_dark(figure)
        assert dark["config"]["background"] == DARK_BACKGROUND
        for colour in drawn_colours(dark):
            assert contrast(colour, DARK_BACKGROUND) >= AA_LARGE, (name, colour)
            checked += 1
        for colour in drawn_colours(figure):
            assert contrast(colour, "#ffffff") >= AA_LARGE, (name, "paper", colour)
    assert checked >= 20  # the walk found the figures' colours
    # the check does fail: the old navy pool on the dark page was 1.4:1
    assert contrast("#08306b", DARK_BACKGROUND) < AA_LARGE


def _inline_rows(node: Any) -> list[str]:
    """The JSON of every inline ``data`` of a spec, wherever it sits."""
    found: list[str] = []
    if isinstance(node, dict):
        data = node.get("data")
        if isinstance(data, dict) and "values" in data:
            found.append(json.dumps(data["values"], sort_keys=True, default=str))
        for key, child in node.items():
            if key != "data":
                found.extend(_inline_rows(child))
    elif isinstance(node, list):
        for child in node:
            found.extend(_inline_rows(child))
    return found


def test_no_figure_sends_the_same_rows_twice(frame: pd.DataFrame) -> None:
    """Each chart's rows go to the browser once (issue 43: the response profile sent its
    434 rows twice, the metric bars theirs four times, once per layer); the pool's
    reference line and its label keep their own one-row data beside the shared bars."""
    for name, figure in every_figure(frame).items():
        rows = [r for r in _inline_rows(for_dark(figure)) if r.count("}, {")]  # 2+ rows
        assert len(rows) == len(set(rows)), name
    board = build_leaderboard(frame, CASES, ScoringParams(n_boot=20))
    bars = metric_bars_chart(metric_bars(board, "radle_c"))
    assert "values" in bars["data"]  # the bars' rows, once, shared by bars, whiskers, caps
    own = [part for part in bars["layer"] if "data" in part]
    assert [part["mark"]["type"] for part in own] == ["rule", "text"]  # the pool line


def test_layer_moves_up_the_data_most_layers_share() -> None:
    rows, ref = values(pd.DataFrame({"v": [1, 2]})), values(pd.DataFrame({"v": [1.5]}))
    a, b, c = ({"data": d, "mark": m} for d, m in ((rows, "bar"), (rows, "tick"), (ref, "rule")))
    assert layer(a, b, c) == {
        "data": rows,
        "layer": [{"mark": "bar"}, {"mark": "tick"}, {"data": ref, "mark": "rule"}],
    }
    # a layer without data would inherit the moved data: nothing moves then
    assert "data" not in layer(a, b, {"mark": "rule"})
