"""The charts in the dark reading room, and on paper.

A chart is built once, for paper: a white background, dark pools and
whiskers (the PNG and SVG downloads, the static report). The app draws the
same spec on the dark page through :func:`for_dark`: its background and text
in the page's colours, and the few colours that only work on white swapped
for light ones. Every responder colour is a mid-tone that keeps 3:1 against
both backgrounds (WCAG 1.4.11), so those need no swap.
"""

from __future__ import annotations

from typing import Any, Final

from reader_app.charts.palette import GROUP_POOLS, GROUP_POOLS_DARK, POOL, POOL_DARK
from reader_app.charts.vl import Spec

DARK_BACKGROUND: Final = "#0e1117"  # the app's theme.backgroundColor (commands/serve.py)
DARK_TEXT: Final = "#e8eaed"  # its theme.textColor
DARK_MUTED: Final = "#a9b0bb"  # axis lines and ticks, 8.6:1 on the background
DARK_GRID: Final = "#30363f"
WHISKER: Final = "black"  # CI whiskers and caps on paper
REFERENCE: Final = "#1f3b73"  # the human pool's reference line and its label on paper

# colour on paper -> colour in the dark app
DARK_SWAPS: Final = {
    POOL: POOL_DARK,
    REFERENCE: POOL_DARK,
    WHISKER: DARK_TEXT,
    "#ffffff": DARK_BACKGROUND,  # paper (a hollow mark, an empty cell) is the dark page
    **dict(zip(GROUP_POOLS, GROUP_POOLS_DARK, strict=True)),
}
DARK_CONFIG: Final[Spec] = {
    "background": DARK_BACKGROUND,
    "view": {"stroke": DARK_GRID},
    "title": {"color": DARK_TEXT, "subtitleColor": DARK_TEXT},
    "axis": {
        "labelColor": DARK_TEXT,
        "titleColor": DARK_TEXT,
        "domainColor": DARK_MUTED,
        "tickColor": DARK_MUTED,
        "gridColor": DARK_GRID,
    },
    "legend": {"labelColor": DARK_TEXT, "titleColor": DARK_TEXT},
    "header": {"labelColor": DARK_TEXT, "titleColor": DARK_TEXT},
    "text": {"color": DARK_TEXT},
}


def _swap(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _swap(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_swap(v) for v in node]
    if isinstance(node, str):
        return DARK_SWAPS.get(node, node)
    return node


def for_dark(chart: Spec) -> Spec:
    """``chart`` as the dark page shows it (a new dict; ``chart`` is left as it was)."""
    config = {**DARK_CONFIG, **chart.get("config", {})}
    return {**_swap({k: v for k, v in chart.items() if k != "config"}), "config": config}
