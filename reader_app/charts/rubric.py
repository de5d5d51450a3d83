"""The report rubric's tier distribution: per responder, the share of reports in each tier."""

from __future__ import annotations

from typing import Final

import pandas as pd

from reader_app.charts.builders import WIDTH, Figure
from reader_app.charts.vl import field, mark, values

# best first, SCORING.md section 6: blues for the good tiers, oranges for the poor ones
# (not greens and reds, which merge for red-green colour vision; issue 42)
TIER_COLORS: Final = {
    "Exceptional": "#084594",  # not #08519c, a group pool the dark page swaps
    "Strong": "#4292c6",
    "Solid": "#9ecae1",
    "Mixed": "#fdae6b",
    "Poor": "#e6550d",
    "Fail": "#7f2704",
}


def tier_distribution_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Stacked 100% bars: ``name``, ``kind``, ``tier``, ``count``, ``share`` (tier_counts)."""
    names = list(dict.fromkeys(str(v) for v in frame["name"]))
    data = frame.assign(order=[list(TIER_COLORS).index(t) for t in frame["tier"]])
    return {
        "data": values(data),
        "mark": mark("bar", height={"band": 0.7}),
        "encoding": {
            "x": field(
                "share:Q",
                stack="normalize",
                title="Share of graded reports",
                axis={"format": "%"},
            ),
            "y": field("name:N", sort=names, title=None),
            "color": field(
                "tier:N",
                scale={"domain": list(TIER_COLORS), "range": list(TIER_COLORS.values())},
                title="Tier",
            ),
            "order": field("order:Q"),
            "tooltip": [
                field("name:N"),
                field("tier:N"),
                field("count:Q"),
                field("share:Q", format=".0%"),
            ],
        },
        "width": WIDTH,
        "height": {"step": 30},  # 30 px per responder, title and axes on top
        "title": title or "Report rubric tiers (0-40)",
    }


def score_histogram_chart(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """One 0-40 histogram per responder (``score_histogram``: responder, score, count, tier),
    bars coloured by tier: the shape of each responder's failure distribution."""
    data = frame.assign(tier=[str(t).capitalize() for t in frame["tier"]])
    names = list(dict.fromkeys(str(v) for v in data["responder"]))
    return {
        "data": values(data),
        "facet": {"row": field("responder:N", sort=names, title=None)},
        "spec": {
            "mark": mark("bar"),
            "encoding": {
                "x": field("score:O", title="Rubric score (0-40)", sort="ascending"),
                "y": field("count:Q", title="Reports"),
                "color": field(
                    "tier:N",
                    scale={"domain": list(TIER_COLORS), "range": list(TIER_COLORS.values())},
                    title="Tier",
                ),
                "tooltip": [field("responder:N"), field("score:O"), field("count:Q")],
            },
            "width": WIDTH,
            "height": 60,
        },
        "title": title or "Rubric score distribution per responder",
    }
