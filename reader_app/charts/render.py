"""Static renders of a chart: PNG and SVG through vl-convert (no browser, no network).

vl-convert bundles Vega, Vega-Lite and fonts, so a figure renders the same on
an offline machine as in the app. It is imported on the first render, not with
this module, so the server holds it only once someone downloads a figure. The
first call in a process starts its JavaScript engine (a couple of seconds, and
about 70 MiB); later calls are fast.
"""

from __future__ import annotations

import json
from typing import Any, Final

from reader_app.charts.vl import SCHEMA_URL, Spec

PNG_SCALE = 2  # 2x pixels: sharp in a paper or on a high-density screen
# The view size Vega-Lite gives a continuous axis without a width or height (Altair's
# default theme, which these downloads have always carried; the app draws without it).
VIEW_CONFIG: Final = {"view": {"continuousWidth": 300, "continuousHeight": 300}}


def spec(chart: Spec) -> dict[str, Any]:
    """The chart as a stand-alone Vega-Lite document (schema and view defaults added)."""
    return {"$schema": SCHEMA_URL, "config": VIEW_CONFIG, **chart}


def spec_json(chart: Spec) -> str:
    return json.dumps(spec(chart), sort_keys=True)


def chart_svg(chart: Spec | str) -> str:
    """SVG text of a chart (or of a Vega-Lite spec given as JSON text)."""
    import vl_convert as vlc  # here, not at the top: a page that shows charts needs none

    data = chart if isinstance(chart, str) else spec_json(chart)
    return str(vlc.vegalite_to_svg(json.loads(data)))


def chart_png(chart: Spec | str, scale: float = PNG_SCALE) -> bytes:
    """PNG bytes of a chart (or of a Vega-Lite spec given as JSON text)."""
    import vl_convert as vlc

    data = chart if isinstance(chart, str) else spec_json(chart)
    return bytes(vlc.vegalite_to_png(json.loads(data), scale=scale))
