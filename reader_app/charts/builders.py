"""One function per figure: a chart-data frame in, an ``alt.Chart`` (data inline) out.

Text from users (reader codes, run names, case ids) only ever enters a chart
as data values, which Vega draws as text (canvas in the app, escaped
``<text>`` in SVG), never as markup.
"""

from __future__ import annotations

import math
from typing import Any, Final

import altair as alt
import pandas as pd

from reader_app.analysis.chart_data import OUTCOMES

ARM_COLORS: Final = {
    "pool": "#1f3b73",
    "group pool": "#6c8ebf",
    "model": "#e07b00",
    "reader": "#9a9a9a",
}
METRIC_DOMAIN: Final = {
    "radle_c": (0.0, 2000.0),
    "radle_a": (0.0, 1.0),
    "radle_r": (0.0, 1.0),
    "radle_s": (0.0, 100.0),
    "radle_h": (0.0, 100.0),
}
METRIC_TITLE: Final = {
    "radle_c": "RadLE-C (0-2000)",
    "radle_a": "RadLE-A, accuracy",
    "radle_r": "RadLE-R, reliability",
    "radle_s": "RadLE-S, safety (0-100)",
    "radle_h": "RadLE-H, handover readiness (0-100)",
}
OUTCOME_COLORS: Final = {
    "wrong · L4": "#67000d",
    "wrong · L3": "#a50f15",
    "wrong · L2": "#d7301f",
    "wrong · L1": "#ef6548",
    "wrong · L0": "#fcae91",
    "I don't know": "#bdbdbd",
    "invalid": "#b39ddb",
    "failure": "#4a4a4a",
    "missing": "#f0f0f0",
    "correct · L0": "#c7e9c0",
    "correct · L1": "#a1d99b",
    "correct · L2": "#74c476",
    "correct · L3": "#31a354",
    "correct · L4": "#006d2c",
}
CELL_COLORS: Final = {
    "correct": "#31a354",
    "wrong": "#d7301f",
    "idk": "#bdbdbd",
    "invalid": "#b39ddb",
    "failure": "#4a4a4a",
    "missing": "#ffffff",
}
WIDTH: Final = 560
Figure = alt.TopLevelMixin  # what every builder returns: a chart that renders on its own


def values(frame: pd.DataFrame) -> alt.Data:
    """Inline data with NaN as null (JSON has no NaN) and plain Python scalars."""
    records = []
    for row in frame.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, value in row.items():
            if value is pd.NA or value is None or (isinstance(value, float) and math.isnan(value)):
                clean[str(key)] = None
            elif hasattr(value, "item"):
                clean[str(key)] = value.item()
            else:
                clean[str(key)] = value
        records.append(clean)
    return alt.Data(values=records)  # type: ignore[no-untyped-call]


def _order(frame: pd.DataFrame, column: str = "name") -> list[str]:
    return list(dict.fromkeys(str(v) for v in frame[column]))


def _arm_scale(frame: pd.DataFrame) -> alt.Scale:
    arms = [a for a in ARM_COLORS if a in set(frame["arm"])]
    return alt.Scale(domain=arms, range=[ARM_COLORS[a] for a in arms])


def metric_bars_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Bars with 95% CI whiskers; the pooled human value as a dashed reference line."""
    metric = str(frame["metric"].iloc[0]) if len(frame) else "radle_c"
    low, high = METRIC_DOMAIN.get(metric, (0.0, 1.0))
    names = _order(frame)
    x_title = METRIC_TITLE.get(metric, metric)
    y = alt.Y("name:N", sort=names, title=None)
    base = alt.Chart(values(frame))
    bars = base.mark_bar(height={"band": 0.7}).encode(
        x=alt.X("value:Q", title=x_title, scale=alt.Scale(domain=[low, high])),
        y=y,
        color=alt.Color("arm:N", scale=_arm_scale(frame), title=None),
        tooltip=[
            alt.Tooltip("name:N"),
            alt.Tooltip("arm:N"),
            alt.Tooltip("value:Q", format=".3~f"),
            alt.Tooltip("ci_low:Q", title="95% CI low", format=".3~f"),
            alt.Tooltip("ci_high:Q", title="95% CI high", format=".3~f"),
        ],
    )
    whiskers = base.mark_rule(color="black", strokeWidth=1.5).encode(
        x="ci_low:Q", x2="ci_high:Q", y=y
    )
    caps_low = base.mark_tick(color="black", thickness=1.5, size=10).encode(x="ci_low:Q", y=y)
    caps_high = base.mark_tick(color="black", thickness=1.5, size=10).encode(x="ci_high:Q", y=y)
    layers: list[Any] = [bars, whiskers, caps_low, caps_high]
    pool = frame["pool_value"].dropna()
    if len(pool):
        ref = pd.DataFrame({"pool_value": [float(pool.iloc[0])], "label": ["human pool"]})
        rule = alt.Chart(values(ref)).mark_rule(color="#1f3b73", strokeDash=[6, 4], size=2)
        text = alt.Chart(values(ref)).mark_text(
            align="left", dx=4, dy=-4, baseline="bottom", color="#1f3b73"
        )
        layers += [
            rule.encode(x="pool_value:Q"),
            text.encode(x="pool_value:Q", y=alt.value(0), text="label:N"),
        ]
    return alt.layer(*layers).properties(
        width=WIDTH,
        height=max(26 * len(names), 80),
        title=title or f"{x_title} with 95% bootstrap CI",
    )


def response_profile_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Share of N per outcome: wrong by Likert level, IDK..., correct by Likert level."""
    domain = [label for label, _, _ in OUTCOMES]
    names = _order(frame)
    chart: Figure = (
        alt.Chart(values(frame))
        .mark_bar()
        .encode(
            x=alt.X(
                "share:Q",
                stack="zero",
                title="share of cases",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1]),
            ),
            y=alt.Y("name:N", sort=names, title=None),
            color=alt.Color(
                "segment:N",
                scale=alt.Scale(domain=domain, range=[OUTCOME_COLORS[d] for d in domain]),
                legend=alt.Legend(title="answer · confidence", columns=2),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("name:N"),
                alt.Tooltip("segment:N"),
                alt.Tooltip("count:Q", format=".2~f"),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
        .properties(
            width=WIDTH,
            height=max(26 * len(names), 80),
            title=title or "Response profile: correct and wrong by confidence, plus IDK",
        )
    )
    return chart


def _line_colors(frame: pd.DataFrame) -> alt.Color:
    return alt.Color("name:N", sort=_order(frame), title=None)


def reliability_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Accuracy at each Likert level against the diagonal p = L/4 (points sized by count)."""
    shown = frame.dropna(subset=["accuracy"])
    diagonal = pd.DataFrame({"likert": [0, 4], "stated": [0.0, 1.0]})
    x = alt.X(
        "likert:Q",
        title="stated confidence (Likert 0-4)",
        scale=alt.Scale(domain=[0, 4]),
        axis=alt.Axis(values=[0, 1, 2, 3, 4], format="d"),
    )
    ref = (
        alt.Chart(values(diagonal))
        .mark_line(color="#777777", strokeDash=[4, 4])
        .encode(x=x, y=alt.Y("stated:Q"))
    )
    base = alt.Chart(values(shown))
    y = alt.Y(
        "accuracy:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")
    )
    lines = base.mark_line().encode(x=x, y=y, color=_line_colors(shown))
    points = base.mark_circle(opacity=0.9).encode(
        x=x,
        y=y,
        color=_line_colors(shown),
        size=alt.Size("n:Q", scale=alt.Scale(range=[30, 300]), legend=None),
        tooltip=[
            alt.Tooltip("name:N"),
            alt.Tooltip("likert:Q"),
            alt.Tooltip("accuracy:Q", format=".1%"),
            alt.Tooltip("n:Q", title="answers", format=".2~f"),
        ],
    )
    return alt.layer(ref, lines, points).properties(
        width=WIDTH,
        height=320,
        title=title or "Reliability: accuracy by stated confidence (point size: answers)",
    )


def risk_coverage_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Selective risk against coverage, one curve per responder (thresholds L4 .. L0)."""
    shown = frame.dropna(subset=["coverage"])
    enc = {
        "x": alt.X(
            "coverage:Q",
            title="coverage (answered at or above the threshold / N)",
            scale=alt.Scale(domain=[0, 1]),
            axis=alt.Axis(format="%"),
        ),
        "y": alt.Y(
            "risk:Q",
            title="selective risk (wrong / answered)",
            scale=alt.Scale(domain=[0, 1]),
            axis=alt.Axis(format="%"),
        ),
        "color": _line_colors(shown),
    }
    chart: Figure = (
        alt.Chart(values(shown))
        .mark_line(point=True)
        .encode(
            **enc,
            order=alt.Order("threshold:Q", sort="descending"),
            tooltip=[
                alt.Tooltip("name:N"),
                alt.Tooltip("threshold:Q", title="Likert >="),
                alt.Tooltip("coverage:Q", format=".1%"),
                alt.Tooltip("risk:Q", format=".1%"),
                alt.Tooltip("aurc:Q", title="AURC", format=".3f"),
            ],
        )
        .properties(width=WIDTH, height=320, title=title or "Risk-coverage curves")
    )
    return chart


def case_matrix_chart(
    cells: pd.DataFrame, cases: pd.DataFrame, *, title: str | None = None
) -> Figure:
    """Difficulty bar per case (from the pool) over the responders x cases outcome grid."""
    order = [str(c) for c in cases["case_id"]]
    responders = _order(cells.sort_values(["kind", "responder"]), "responder")
    width = max(min(14 * len(order), 900), 200)
    x = alt.X(
        "case_id:N",
        sort=order,
        title="case (hardest for the pool first)",
        axis=alt.Axis(labelAngle=-60, labelLimit=120),
    )
    difficulty = (
        alt.Chart(values(cases))
        .mark_bar(color="#6c8ebf")
        .encode(
            x=x.axis(None),
            y=alt.Y("difficulty:Q", title="difficulty", scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                alt.Tooltip("case_id:N"),
                alt.Tooltip("pool_accuracy:Q", title="pool accuracy", format=".0%"),
                alt.Tooltip("split:N"),
            ],
        )
        .properties(width=width, height=80)
    )
    domain = list(CELL_COLORS)
    grid = (
        alt.Chart(values(cells))
        .mark_rect(stroke="#dddddd", strokeWidth=0.5)
        .encode(
            x=x,
            y=alt.Y("responder:N", sort=responders, title=None),
            color=alt.Color(
                "outcome:N",
                scale=alt.Scale(domain=domain, range=[CELL_COLORS[d] for d in domain]),
                title="outcome",
            ),
            tooltip=[
                alt.Tooltip("responder:N"),
                alt.Tooltip("kind:N"),
                alt.Tooltip("case_id:N"),
                alt.Tooltip("outcome:N"),
                alt.Tooltip("likert:Q"),
            ],
        )
        .properties(width=width, height=max(16 * len(responders), 60))
    )
    return alt.vconcat(difficulty, grid, spacing=4).properties(
        title=title or "Per-case outcomes: who gets which case"
    )


def group_split_chart(
    frame: pd.DataFrame, metric: str = "radle_c", *, title: str | None = None
) -> Figure:
    """One metric for the overall pool and each reader-group pool, with 95% CI whiskers."""
    shown = frame[frame["metric"] == metric]
    low, high = METRIC_DOMAIN.get(metric, (0.0, 1.0))
    names = _order(shown)
    y = alt.Y("name:N", sort=names, title=None)
    base = alt.Chart(values(shown))
    bars = base.mark_bar(height={"band": 0.6}, color="#6c8ebf").encode(
        x=alt.X(
            "value:Q", title=METRIC_TITLE.get(metric, metric), scale=alt.Scale(domain=[low, high])
        ),
        y=y,
        tooltip=[
            alt.Tooltip("name:N"),
            alt.Tooltip("n_readers:Q", title="readers"),
            alt.Tooltip("value:Q", format=".3~f"),
            alt.Tooltip("ci_low:Q", title="95% CI low", format=".3~f"),
            alt.Tooltip("ci_high:Q", title="95% CI high", format=".3~f"),
        ],
    )
    whiskers = base.mark_rule(color="black", strokeWidth=1.5).encode(
        x="ci_low:Q", x2="ci_high:Q", y=y
    )
    return alt.layer(bars, whiskers).properties(
        width=WIDTH,
        height=max(30 * len(names), 80),
        title=title or f"Reader groups: {METRIC_TITLE.get(metric, metric)}",
    )
