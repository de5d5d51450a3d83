"""The grounding audit's chart: accuracy in each arm, per audited model, beside the
human readers' grounding rate G and grounded accuracy GA on the same cases."""

from __future__ import annotations

import pandas as pd

from reader_app.charts.builders import PAD, WIDTH, Figure
from reader_app.charts.palette import POOL
from reader_app.charts.vl import field, layer, mark, values

SERIES_ORDER = (
    "original",
    "occlude_relevant",
    "occlude_irrelevant",
    "swap",
    "text_only",
    "human readers' G",
    "human readers' GA",
)


def audit_arms_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Grouped bars (one group per arm, one bar per model) with 95% CI rules; the
    human readers' G and GA as two bars of their own colour at the right."""
    names = list(dict.fromkeys(str(n) for n in frame["name"]))
    data = values(frame)
    x = field("series:N", sort=list(SERIES_ORDER), title=None, axis={"labelAngle": -30})
    palette = _model_colors(len(names))
    scale = {
        "domain": names,
        "range": [POOL if n == "human readers" else c for n, c in zip(names, palette, strict=True)],
    }
    color = field("name:N", title=None, sort=names, scale=scale)
    bars = {
        "data": data,
        "mark": mark("bar"),
        "encoding": {
            "x": x,
            "xOffset": field("name:N", sort=names),
            "y": field("value:Q", title="accuracy (G, GA for readers)", scale={"domain": [0, 1]}),
            "color": color,
            "tooltip": [
                field("name:N"),
                field("series:N", title="arm"),
                field("value:Q", format=".3~f"),
                field("ci_low:Q", title="95% CI low", format=".3~f"),
                field("ci_high:Q", title="95% CI high", format=".3~f"),
            ],
        },
    }
    whiskers = {
        "data": data,
        "mark": mark("rule", color="black", strokeWidth=1.5),
        "encoding": {
            "x": x,
            "xOffset": field("name:N", sort=names),
            "y": field("ci_low:Q"),
            "y2": {"field": "ci_high"},
        },
    }
    return layer(
        bars,
        whiskers,
        autosize=PAD,
        width=WIDTH,
        height=260,
        title=title or "Accuracy by audit arm, with 95% bootstrap CI",
    )


def _model_colors(n: int) -> list[str]:
    scheme = ["#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]
    return [scheme[i % len(scheme)] for i in range(n)]
