"""Static renders of a chart: PNG and SVG through vl-convert (no browser, no network).

vl-convert bundles Vega, Vega-Lite and fonts, so a figure renders the same on
an offline machine as in the app. The first call in a process starts its
JavaScript engine (a couple of seconds); later calls are fast.
"""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import vl_convert as vlc

PNG_SCALE = 2  # 2x pixels: sharp in a paper or on a high-density screen


def spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    out: dict[str, Any] = chart.to_dict()
    return out


def spec_json(chart: alt.TopLevelMixin) -> str:
    return json.dumps(spec(chart), sort_keys=True)


def chart_svg(chart: alt.TopLevelMixin | str) -> str:
    """SVG text of a chart (or of a Vega-Lite spec given as JSON text)."""
    data = chart if isinstance(chart, str) else spec_json(chart)
    return str(vlc.vegalite_to_svg(json.loads(data)))


def chart_png(chart: alt.TopLevelMixin | str, scale: float = PNG_SCALE) -> bytes:
    """PNG bytes of a chart (or of a Vega-Lite spec given as JSON text)."""
    data = chart if isinstance(chart, str) else spec_json(chart)
    return bytes(vlc.vegalite_to_png(json.loads(data), scale=scale))
