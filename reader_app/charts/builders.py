"""One function per figure: a chart-data frame in, a Vega-Lite spec (a dict, data inline) out.

Text from users (reader codes, run names, case ids) only ever enters a chart
as data values, which Vega draws as text (canvas in the app, escaped
``<text>`` in SVG), never as markup.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pandas as pd

from reader_app.charts.contrast import contrast
from reader_app.charts.palette import GROUP_POOLS, POOL, drawn_last, name_color, with_weights
from reader_app.charts.series import GROUNDING_SERIES, OUTCOMES
from reader_app.charts.theme import REFERENCE, WHISKER
from reader_app.charts.vl import Spec, field, layer, mark, secondary, value, values, when

ARM_COLORS: Final = {  # families: humans cool (pools darkest), models warm
    "pool": POOL,
    "group pool": GROUP_POOLS[0],
    "model": "#d95f02",
    "reader": "#2171b5",
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
# Correct and wrong (issue 42): blue against orange, not green against red, so they stay
# apart for the 1 in 12 men with red-green colour vision (tests/reader_app/charts/
# test_colour_vision.py simulates protanopia, deuteranopia and tritanopia); and never by
# colour alone: every correct mark carries a check, every wrong one a cross (GLYPHS).
OUTCOME_COLORS: Final = {
    "wrong · L4": "#7f2704",
    "wrong · L3": "#a63603",
    "wrong · L2": "#d94801",
    "wrong · L1": "#f16913",
    "wrong · L0": "#fdae6b",
    "I don't know": "#bdbdbd",
    "invalid": "#b39ddb",
    "failure": "#4a4a4a",
    "missing": "#f0f0f0",
    "correct · L0": "#c6dbef",
    "correct · L1": "#9ecae1",
    "correct · L2": "#6baed6",
    "correct · L3": "#2171b5",
    # not the pool's navy #08306b: the dark page swaps that one for white (charts/theme.py)
    "correct · L4": "#084594",
}
CELL_COLORS: Final = {
    "correct": "#0072b2",  # Okabe-Ito blue
    "wrong": "#e69f00",  # Okabe-Ito orange
    "idk": "#bdbdbd",
    "invalid": "#b39ddb",
    "failure": "#4a4a4a",
    "missing": "#ffffff",
}
# the second cue: a glyph per outcome, in the cells, the segments and the legends
GLYPHS: Final = {
    "correct": "\u2713",  # check
    "wrong": "\u2717",  # cross
    "idk": "?",
    "invalid": "!",
    "failure": "\u2298",  # circled slash: no answer came back
    "missing": "",
}
INK_DARK: Final = "#000000"  # glyphs on light fills (not "black": the dark theme swaps it)
INK_LIGHT: Final = "#fafafa"  # glyphs on dark fills (not "#ffffff", the paper colour)
GLYPH_PX: Final = 11  # the glyph's size; a cell or segment narrower than this shows none


def ink_on(fill: str) -> str:
    """The glyph colour that reads best on ``fill``: dark or light."""
    return INK_DARK if contrast(INK_DARK, fill) >= contrast(INK_LIGHT, fill) else INK_LIGHT


def outcome_of(label: str) -> str:
    """``"wrong · L3"`` -> ``"wrong"``, ``"I don't know"`` -> ``"idk"``, ``"missing"`` -> itself."""
    head = label.split(" · ")[0]
    return "idk" if head == "I don't know" else head


def glyph_legend_labels(labels: list[str]) -> str:
    """A Vega expression putting each legend label's glyph before it: "✓ correct · L4"."""
    expr = "datum.label"
    for label in labels:
        glyph = GLYPHS.get(outcome_of(label), "")
        if glyph:
            shown = json.dumps(f"{glyph} {label}", ensure_ascii=False)
            expr = f"datum.label === {json.dumps(label)} ? {shown} : ({expr})"
    return expr


# accuracy against grounding: humans cool, models warm; a text-only run is hollow
SERIES_STROKE: Final = dict(
    zip(GROUNDING_SERIES, (POOL, "#2171b5", "#d95f02", "#d95f02"), strict=True)
)
SERIES_FILL: Final = dict(
    zip(GROUNDING_SERIES, (POOL, "#2171b5", "#d95f02", "#ffffff"), strict=True)
)
SERIES_SHAPE: Final = dict(
    zip(GROUNDING_SERIES, ("circle", "circle", "diamond", "diamond"), strict=True)
)
SERIES_SIZE: Final = dict(zip(GROUNDING_SERIES, (220, 70, 150, 150), strict=True))
WIDTH: Final = 560
LABELLED_CASES: Final = 64  # the matrix labels its cases up to this many (>= 14 px each)
Figure = Spec  # what every builder returns: a spec that renders on its own
# Width and height are the plotting area's; axes, titles and legends come on top. Without
# this, Streamlit sizes a single chart with autosize "fit" (the whole figure in `height`):
# a three-bar chart then kept about 15 px for its bars.
PAD: Final = {"type": "pad", "contains": "padding"}
# Click a legend entry (shift-click for several) to bring those series forward.
PICKED: Final = "pick"
PICK: Final[Spec] = {
    "name": PICKED,
    "select": {"type": "point", "fields": ["name"]},
    "bind": "legend",
}


def _order(frame: pd.DataFrame, column: str = "name") -> list[str]:
    return list(dict.fromkeys(str(v) for v in frame[column]))


def _arm_scale(frame: pd.DataFrame) -> Spec:
    arms = [a for a in ARM_COLORS if a in set(frame["arm"])]
    return {"domain": arms, "range": [ARM_COLORS[a] for a in arms]}


def _value_with_ci() -> list[Spec]:
    """Tooltip fields: the value and its 95% CI."""
    return [
        field("value:Q", format=".3~f"),
        field("ci_low:Q", title="95% CI low", format=".3~f"),
        field("ci_high:Q", title="95% CI high", format=".3~f"),
    ]


def _ci_whiskers(data: Spec, y: Spec) -> Spec:
    """A rule from ci_low to ci_high on each row (black on paper, light in the app)."""
    return {
        "data": data,
        "mark": mark("rule", color=WHISKER, strokeWidth=1.5),
        "encoding": {"x": field("ci_low:Q"), "x2": secondary("ci_high"), "y": y},
    }


def metric_bars_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Bars with 95% CI whiskers; the pooled human value as a dashed reference line."""
    metric = str(frame["metric"].iloc[0]) if len(frame) else "radle_c"
    low, high = METRIC_DOMAIN.get(metric, (0.0, 1.0))
    names = _order(frame)
    x_title = METRIC_TITLE.get(metric, metric)
    y = field("name:N", sort=names, title=None)
    data = values(frame)
    bars = {
        "data": data,
        "mark": mark("bar", height={"band": 0.7}),
        "encoding": {
            "x": field("value:Q", title=x_title, scale={"domain": [low, high]}),
            "y": y,
            "color": field("arm:N", scale=_arm_scale(frame), title=None),
            "tooltip": [field("name:N"), field("arm:N"), *_value_with_ci()],
        },
    }
    whiskers = _ci_whiskers(data, y)
    cap = mark("tick", color=WHISKER, thickness=1.5, size=10)
    caps_low = {"data": data, "mark": cap, "encoding": {"x": field("ci_low:Q"), "y": y}}
    caps_high = {"data": data, "mark": cap, "encoding": {"x": field("ci_high:Q"), "y": y}}
    layers: list[Spec] = [bars, whiskers, caps_low, caps_high]
    pool = frame["pool_value"].dropna()
    if len(pool):
        ref = pd.DataFrame({"pool_value": [float(pool.iloc[0])], "label": ["human pool"]})
        layers += [
            {
                "data": values(ref),
                "mark": mark("rule", color=REFERENCE, strokeDash=[6, 4], size=2),
                "encoding": {"x": field("pool_value:Q")},
            },
            {
                "data": values(ref),
                "mark": mark("text", align="left", dx=4, dy=-4, baseline="bottom", color=REFERENCE),
                "encoding": {"x": field("pool_value:Q"), "y": value(0), "text": field("label:N")},
            },
        ]
    return layer(
        *layers,
        autosize=PAD,
        width=WIDTH,
        height=max(26 * len(names), 80),
        title=title or f"{x_title} with 95% bootstrap CI",
    )


def response_profile_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Share of N per outcome: wrong by Likert level, IDK..., correct by Likert level; each
    segment wide enough carries its outcome's glyph (check, cross), as does the legend."""
    domain = [label for label, _, _ in OUTCOMES]
    names = _order(frame)
    y = field("name:N", sort=names, title=None)
    bars = {
        "mark": mark("bar"),
        "encoding": {
            "x": field(
                "share:Q",
                stack="zero",
                title="share of cases",
                axis={"format": "%"},
                scale={"domain": [0, 1]},
            ),
            "y": y,
            "color": field(
                "segment:N",
                scale={"domain": domain, "range": [OUTCOME_COLORS[d] for d in domain]},
                legend={
                    "title": "answer · confidence",
                    "columns": 2,
                    "labelExpr": glyph_legend_labels(domain),
                },
            ),
            "order": field("order:Q"),
            "tooltip": [
                field("name:N"),
                field("segment:N"),
                field("count:Q", format=".2~f"),
                field("share:Q", format=".1%"),
            ],
        },
    }
    glyph_of = {d: GLYPHS.get(outcome_of(d), "") for d in domain}
    ink_of = {d: ink_on(OUTCOME_COLORS[d]) for d in domain}
    marked = frame.assign(
        glyph=[glyph_of.get(str(seg), "") for seg in frame["segment"]],
        ink=[ink_of.get(str(seg), INK_DARK) for seg in frame["segment"]],
    )
    wide = GLYPH_PX / WIDTH  # the smallest share a glyph fits in
    data = values(marked)  # one object for both layers: layer() sends it once
    glyphs = {
        "data": data,
        "transform": [
            {
                "stack": "share",
                "groupby": ["name"],
                "sort": [{"field": "order"}],
                "as": ["share_start", "share_end"],
            },
            {"filter": f"datum.glyph !== '' && datum.share >= {wide}"},
            {"calculate": "(datum.share_start + datum.share_end) / 2", "as": "share_mid"},
        ],
        "mark": mark("text", fontSize=GLYPH_PX, fontWeight="bold", baseline="middle"),
        "encoding": {
            "x": field("share_mid:Q", scale={"domain": [0, 1]}),
            "y": y,
            "text": field("glyph:N"),
            "color": field("ink:N", scale=None),
        },
    }
    return {
        **layer({"data": data, **bars}, glyphs),
        "autosize": PAD,
        "width": WIDTH,
        "height": max(26 * len(names), 80),
        "title": title or "Response profile: correct and wrong by confidence, plus IDK",
    }


def _highlighted(frame: pd.DataFrame, highlight: str | None) -> str | None:
    return highlight if highlight is not None and highlight in set(frame["name"]) else None


def reliability_chart(
    frame: pd.DataFrame, *, title: str | None = None, highlight: str | None = None
) -> Figure:
    """Accuracy at each Likert level against the diagonal p = L/4 (points sized by count).

    One line per responder, coloured by kind family, pools heavier; the legend
    names every series and selects (highlights) them. With ``highlight`` (a series'
    name), that one line is drawn in colour on top and every other responder grey."""
    highlight = _highlighted(frame, highlight)
    shown = with_weights(frame.dropna(subset=["accuracy"]), highlight)
    diagonal = pd.DataFrame({"likert": [0, 4], "stated": [0.0, 1.0]})
    x = field(
        "likert:Q",
        title="stated confidence (Likert 0-4)",
        scale={"domain": [0, 4]},
        axis={"values": [0, 1, 2, 3, 4], "format": "d"},
    )
    ref = {
        "data": values(diagonal),
        "mark": mark("line", color="#777777", strokeDash=[4, 4]),
        "encoding": {"x": x, "y": field("stated:Q")},
    }
    data = values(drawn_last(shown, highlight))
    y = field("accuracy:Q", title="accuracy", scale={"domain": [0, 1]}, axis={"format": "%"})
    color = name_color(shown, PICKED, highlight)
    tooltip = [
        field("name:N"),
        field("arm:N", title="kind"),
        field("likert:Q"),
        field("accuracy:Q", format=".1%"),
        field("n:Q", title="answers", format=".2~f"),
    ]
    lines = {
        "data": data,
        "mark": mark("line"),
        "encoding": {
            "x": x,
            "y": y,
            "color": color,
            "strokeWidth": field("weight:Q", scale=None),
            "opacity": when(PICKED, 0.95, 0.08),
            "detail": field("name:N"),
            "tooltip": tooltip,
        },
        "name": "view_1",  # the layer the legend selection lives in
    }
    points = {
        "data": data,
        "mark": mark("circle"),
        "encoding": {
            "x": x,
            "y": y,
            "color": color,
            "size": field("n:Q", scale={"range": [12, 160]}, legend=None),
            "opacity": when(PICKED, 0.9, 0.06),
            "tooltip": tooltip,
        },
    }
    return layer(
        ref,
        lines,
        points,
        params=[{**PICK, "views": ["view_1"]}],
        autosize=PAD,
        width=WIDTH,
        height=360,
        title=title or "Reliability: accuracy by stated confidence (point size: answers)",
    )


def risk_coverage_chart(
    frame: pd.DataFrame, *, title: str | None = None, highlight: str | None = None
) -> Figure:
    """Selective risk against coverage, one curve per responder (thresholds L4 .. L0);
    kind families, pools heavier, legend selection and ``highlight`` as in the
    reliability chart."""
    highlight = _highlighted(frame, highlight)
    shown = with_weights(frame.dropna(subset=["coverage"]), highlight)
    percent = {"domain": [0, 1]}
    return {
        "data": values(drawn_last(shown, highlight)),
        "mark": mark("line", point={"size": 18}),
        "encoding": {
            "x": field(
                "coverage:Q",
                title="coverage (answered at or above the threshold / N)",
                scale=percent,
                axis={"format": "%"},
            ),
            "y": field(
                "risk:Q",
                title="selective risk (wrong / answered)",
                scale=percent,
                axis={"format": "%"},
            ),
            "color": name_color(shown, PICKED, highlight),
            "strokeWidth": field("weight:Q", scale=None),
            "opacity": when(PICKED, 0.95, 0.08),
            "detail": field("name:N"),
            "order": field("threshold:Q", sort="descending"),
            "tooltip": [
                field("name:N"),
                field("arm:N", title="kind"),
                field("threshold:Q", title="Likert >="),
                field("coverage:Q", format=".1%"),
                field("risk:Q", format=".1%"),
                field("aurc:Q", title="AURC", format=".3f"),
            ],
        },
        "params": [dict(PICK)],
        "autosize": PAD,
        "width": WIDTH,
        "height": 360,
        "title": title or "Risk-coverage curves",
    }


MATRIX_BAR: Final = "#6c8ebf"  # the per-case matrix's difficulty bars
CELL_STROKE: Final = "#dddddd"  # the per-case matrix's cell borders


def matrix_width(n_cases: int) -> int:
    """The per-case matrix's width in px: 14 a case, within 200-900."""
    return max(min(14 * n_cases, 900), 200)


def matrix_x_title(n_cases: int) -> str:
    return "case (hardest for the pool first; equal difficulty in case-id order)" + (
        "; hover a cell for its case" if n_cases > LABELLED_CASES else ""
    )


def case_matrix_chart(
    cells: pd.DataFrame, cases: pd.DataFrame, *, title: str | None = None
) -> Figure:
    """Difficulty bar per case (from the pool) over the responders x cases outcome grid."""
    order = [str(c) for c in cases["case_id"]]
    responders = _order(cells.sort_values(["kind", "responder"]), "responder")
    width = matrix_width(len(order))
    many = len(order) > LABELLED_CASES  # past this, case ids are on hover only
    x = field(
        "case_id:N",
        sort=order,
        title=matrix_x_title(len(order)),
        axis={"labelAngle": -60, "labelLimit": 120, "labels": not many, "ticks": not many},
    )
    difficulty = {
        "data": values(cases),
        "mark": mark("bar", color=MATRIX_BAR),
        "encoding": {
            "x": {**x, "axis": None},
            "y": field("difficulty:Q", title="difficulty", scale={"domain": [0, 1]}),
            "tooltip": [
                field("case_id:N"),
                field("pool_accuracy:Q", title="pool accuracy", format=".0%"),
                field("split:N"),
            ],
        },
        "width": width,
        "height": 80,
    }
    domain = list(CELL_COLORS)
    y = field("responder:N", sort=responders, title=None)
    # the figure for a paper and the static report; the page draws the same cells with a
    # component of ours (ui/components/matrix_view.py), which takes the hover and click
    rects = {
        "mark": mark("rect", stroke=CELL_STROKE, strokeWidth=0.5),
        "encoding": {
            "x": x,
            "y": y,
            "color": field(
                "outcome:N",
                scale={"domain": domain, "range": [CELL_COLORS[d] for d in domain]},
                title="outcome",
                legend={"labelExpr": glyph_legend_labels(domain)},
            ),
        },
    }
    layers: list[Spec] = [rects]
    if width / max(len(order), 1) >= GLYPH_PX:  # the glyph fits in the cell
        layers.append(
            {
                "transform": [{"filter": "datum.glyph !== ''"}],
                "mark": mark("text", fontSize=GLYPH_PX, fontWeight="bold", baseline="middle"),
                "encoding": {
                    "x": x,
                    "y": y,
                    "text": field("glyph:N"),
                    "color": field("ink:N", scale=None),
                },
            }
        )
    # once per outcome, not per cell (1,400 contrast computations a run at 50 x 28)
    outcomes = cells["outcome"].astype(str)
    inks = {o: ink_on(CELL_COLORS.get(o, "#ffffff")) for o in outcomes.unique()}
    marked = cells.assign(
        glyph=[GLYPHS.get(o, "") for o in outcomes],
        ink=[inks[o] for o in outcomes],
    )
    data = values(marked)
    grid = {
        **layer(*({"data": data, **part} for part in layers)),
        "width": width,
        "height": max(16 * len(responders), 60),
    }
    return {
        "vconcat": [difficulty, grid],
        "spacing": 4,
        "autosize": PAD,
        "title": title or "Per-case outcomes: who gets which case",
    }


def group_split_chart(
    frame: pd.DataFrame, metric: str = "radle_c", *, title: str | None = None
) -> Figure:
    """One metric for the overall pool and each reader-group pool, with 95% CI whiskers."""
    shown = frame[frame["metric"] == metric]
    low, high = METRIC_DOMAIN.get(metric, (0.0, 1.0))
    names = _order(shown)
    y = field("name:N", sort=names, title=None)
    data = values(shown)
    bars = {
        "data": data,
        "mark": mark("bar", height={"band": 0.6}, color="#6c8ebf"),
        "encoding": {
            "x": field(
                "value:Q",
                title=METRIC_TITLE.get(metric, metric),
                scale={"domain": [low, high]},
            ),
            "y": y,
            "tooltip": [
                field("name:N"),
                field("n_readers:Q", title="readers"),
                *_value_with_ci(),
            ],
        },
    }
    whiskers = _ci_whiskers(data, y)
    return layer(
        bars,
        whiskers,
        autosize=PAD,
        width=WIDTH,
        height=max(30 * len(names), 80),
        title=title or f"Reader groups: {METRIC_TITLE.get(metric, metric)}",
    )


def _series(channel: str, domain: list[str], by: dict[str, Any], legend: Spec) -> Spec:
    return field(channel, scale={"domain": domain, "range": [by[d] for d in domain]}, legend=legend)


def accuracy_grounding_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Accuracy (y) against grounding rate G (x), humans and models on one plot, each
    point with its 95% CI whiskers both ways; text-only runs are hollow diamonds.

    Above the diagonal a responder is right more often than it looks in the right
    place: the ungrounded share of its right answers (U) is large."""
    shown = frame.dropna(subset=["accuracy", "grounding_rate"])
    domain = [s for s in GROUNDING_SERIES if s in set(shown["series"])] or list(GROUNDING_SERIES)
    unit = {"domain": [0, 1], "nice": False, "padding": 10}  # room for points at 0 and 100%
    x = field("grounding_rate:Q", title="grounding rate G (hits / cases with a region)",
              scale=unit, axis={"format": "%"})  # fmt: skip
    y = field("accuracy:Q", title="accuracy (RadLE-A)", scale=unit, axis={"format": "%"})
    legend = {"title": None, "orient": "right", "symbolStrokeWidth": 2}
    data = values(shown)
    line = pd.DataFrame({"grounding_rate": [0.0, 1.0], "accuracy": [0.0, 1.0]})
    diagonal = {
        "data": values(line),
        "mark": mark("line", color="#8a8a8a", strokeDash=[4, 4]),
        "encoding": {"x": x, "y": y},
    }
    whisker = mark("rule", color="#8a8a8a", strokeWidth=1.2, opacity=0.8)  # dark or light
    across = {
        "data": data,
        "mark": whisker,
        "encoding": {
            "x": field("grounding_rate_ci_low:Q"),
            "x2": secondary("grounding_rate_ci_high"),
            "y": y,
        },
    }
    up = {
        "data": data,
        "mark": whisker,
        "encoding": {
            "x": x,
            "y": field("accuracy_ci_low:Q"),
            "y2": secondary("accuracy_ci_high"),
        },
    }
    points = {
        "data": data,
        "mark": mark("point", filled=False, strokeWidth=2, opacity=1),
        "encoding": {
            "x": x,
            "y": y,
            "stroke": _series("series:N", domain, SERIES_STROKE, legend),
            "fill": _series("series:N", domain, SERIES_FILL, legend),
            "shape": _series("series:N", domain, SERIES_SHAPE, legend),
            # the same legend for all four, or Vega-Lite drops it
            "size": _series("series:N", domain, SERIES_SIZE, legend),
            "tooltip": [
                field("name:N"),
                field("series:N", title="kind"),
                field("accuracy:Q", format=".1%"),
                field("accuracy_ci_low:Q", title="accuracy 95% CI low", format=".1%"),
                field("accuracy_ci_high:Q", title="accuracy 95% CI high", format=".1%"),
                field("grounding_rate:Q", title="G", format=".1%"),
                field("grounding_rate_ci_low:Q", title="G 95% CI low", format=".1%"),
                field("grounding_rate_ci_high:Q", title="G 95% CI high", format=".1%"),
                field("n_grounded:Q", title="cases with a region"),
            ],
        },
    }
    # names beside the pool and the model runs; readers are many, so on hover only
    labels = {
        "data": data,
        "transform": [{"filter": "(datum.arm !== 'reader')"}],
        "mark": mark("text", align="left", dx=9, dy=-7, fontSize=11, color="#8a8a8a"),
        "encoding": {"x": x, "y": y, "text": field("name:N")},
    }
    n = int(shown["n_grounded"].iloc[0]) if len(shown) else 0
    return layer(
        diagonal,
        across,
        up,
        points,
        labels,
        autosize=PAD,
        width=420,
        height=420,
        title=title or f"Accuracy against grounding rate ({n} case(s) with a reference region)",
    )
