"""Colours and line weights per responder, so 2 to 40 series stay apart.

Kinds are told apart by colour family: human readers in cool colours (blues,
greens, purples), model runs in warm ones (oranges, reds, pinks, browns). Every
responder colour is a mid-tone (relative luminance 0.13-0.27), so it keeps a
3:1 contrast on white paper and on the app's dark background alike. The human
pool is the page's strongest colour and drawn heaviest: near-black navy on
paper, white in the app (charts/theme.py swaps it); the group pools are navy
shades on paper and pale blues in the app, drawn heavier than any single
responder. Past the length of a family's
list colours repeat, so every chart with per-responder series also has a
legend selection (click an entry to bring that series forward) and tooltips.
"""

from __future__ import annotations

from typing import Final

import pandas as pd

from reader_app.charts.vl import Spec, field

POOL: Final = "#08306b"
POOL_DARK: Final = "#ffffff"
GROUP_POOLS: Final = ("#2c5d9c", "#08519c", "#1b4f72", "#3f4f8f", "#0b6e8a")
GROUP_POOLS_DARK: Final = ("#c6dbef", "#9ecae1", "#b3e5fc", "#d0d1e6", "#a6d8e0")
HUMANS: Final = (
    "#2171b5", "#3da057", "#7359ad", "#1d91c0", "#238b45", "#807dba",
    "#3d95c9", "#007a31", "#8d1aff", "#349aa6", "#44a046", "#8d88be",
)  # fmt: skip
MODELS: Final = (
    "#d95f02", "#e7298a", "#ba3d03", "#ea6402", "#ce1256", "#bf812d",
    "#cd181d", "#f64d90", "#98580b", "#de6e00", "#ce005b", "#fa532f",
    "#bd821f", "#d2001b", "#ec6327", "#c51b7d",
)  # fmt: skip
WIDTH: Final = {"pool": 4.5, "group pool": 3.0, "model": 1.6, "reader": 1.6}
DASH: Final = {"pool": [1, 0], "group pool": [1, 0], "model": [1, 0], "reader": [5, 2]}
KIND_ORDER: Final = ("pool", "group pool", "model", "reader")
# With a highlighted responder, every other single responder is drawn in this grey (3.5:1
# on paper, 5.4:1 on the dark page): 16 model runs in warm hues were not told apart
# (issue 42), one in colour among greys is.
GREYED: Final = "#8a8a8a"
HIGHLIGHT_WIDTH: Final = 3.5


def responders(frame: pd.DataFrame, highlight: str | None = None) -> pd.DataFrame:
    """One row per series: name, arm, colour, stroke width, in legend order (pools, models,
    readers, each in the order they come in ``frame``). With ``highlight``, that series
    keeps its colour, drawn heavier, the pools theirs, and every other one is grey."""
    seen = frame[["name", "arm"]].drop_duplicates("name")
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    seen = seen.assign(_k=seen["arm"].map(rank)).sort_values("_k", kind="stable")
    colours, counters = [], {"group pool": 0, "model": 0, "reader": 0}
    for arm in seen["arm"]:
        if arm == "pool":
            colours.append(POOL)
            continue
        family = {"group pool": GROUP_POOLS, "model": MODELS}.get(str(arm), HUMANS)
        colours.append(family[counters[str(arm)] % len(family)])
        counters[str(arm)] += 1
    names = seen["name"].astype(str).to_numpy()
    arms = seen["arm"].astype(str).to_numpy()
    widths = [WIDTH[a] for a in arms]
    if highlight is not None:
        for i, (name, arm) in enumerate(zip(names, arms, strict=True)):
            if name == highlight:
                widths[i] = HIGHLIGHT_WIDTH
            elif arm not in ("pool", "group pool"):
                colours[i] = GREYED
    return pd.DataFrame({"name": names, "arm": arms, "colour": colours, "width": widths})


def with_weights(frame: pd.DataFrame, highlight: str | None = None) -> pd.DataFrame:
    """``frame`` plus the line width of each row's series (column ``weight``), heavier
    for ``highlight``."""
    out = frame.assign(weight=frame["arm"].map(WIDTH).astype(float))
    if highlight is not None:
        out.loc[out["name"].astype(str) == highlight, "weight"] = HIGHLIGHT_WIDTH
    return out


def drawn_last(frame: pd.DataFrame, highlight: str | None) -> pd.DataFrame:
    """``frame`` in drawing order with ``highlight``: the grey series first, then the
    pools (the white human pool was under 28 grey lines), ``highlight``'s rows last, over
    them all (colours come from ``frame`` before this: the order gives a series its
    colour)."""
    if highlight is None:
        return frame
    chosen = frame["name"].astype(str) == highlight
    pooled = frame["arm"].isin(["pool", "group pool"]) & ~chosen
    return pd.concat([frame[~chosen & ~pooled], frame[pooled], frame[chosen]], ignore_index=True)


def name_color(
    frame: pd.DataFrame, selection: str | None = None, highlight: str | None = None
) -> Spec:
    """Colour by responder name, families by kind, with a legend listing every series
    (``selection``: the name of the legend's selection parameter, if it has one;
    ``highlight``: the one series left in colour among greys, see ``responders``)."""
    series = responders(frame, highlight)
    n = len(series)
    legend = {
        "title": "click to highlight (shift: several)" if selection is not None else None,
        "symbolLimit": 0,
        "labelLimit": 220,
        "columns": 2 if n > 22 else 1,
        "orient": "right",
        "symbolType": "stroke",
        "symbolStrokeWidth": 3,
        "labelFontSize": 11,
    }
    return field(
        "name:N",
        scale={"domain": list(series["name"]), "range": list(series["colour"])},
        sort=list(series["name"]),
        legend=legend,
    )
