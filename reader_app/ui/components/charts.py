"""A chart on a page with its three downloads: PNG, SVG (vl-convert) and the CSV behind it.

PNG, SVG and CSV (and the spec's JSON they are made from) are made only when
their button is clicked (a callable download, run off the script thread), so a
page with six charts does not render twelve images and six CSVs on every rerun
in the process that serves the readers. The chart's data frame is the CSV,
exactly as plotted. On the page a chart is drawn on a canvas (``CANVAS``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import streamlit as st

from reader_app.charts import chart_png, chart_svg
from reader_app.charts.theme import for_dark
from reader_app.charts.vl import SCHEMA_URL, Spec
from reader_app.core.csv_safe import spreadsheet_csv

# Drawn on a canvas, not as SVG: Streamlit's default below 2,000 rows a layer made the
# Per-case matrix's 50 x 28 cells 4,000 SVG elements, each set attribute by attribute
# (issue 43: the page's second visit 1.5x a bare page's). The downloads stay SVG/PNG.
CANVAS = {"embedOptions": {"renderer": "canvas"}}


# On the page a figure is as wide as its column, legend and axes included: the plot gives
# way (a 1024 px screen with the sidebar open left the legend and half the title out of
# sight at the builders' 560 px plots); heights stay as built. The downloads keep the
# builders' sizes.
FIT_WIDTH = {"type": "fit-x", "contains": "padding"}
COMPOSED = ("facet", "hconcat", "vconcat", "concat", "repeat")


def fits_column(chart: Spec) -> bool:
    """Whether ``chart`` can be fitted to its column: a single view, layers included
    (Vega-Lite fits no faceted or concatenated figure; those keep their size)."""
    return not any(k in chart for k in COMPOSED)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "chart"


def _lazy(
    make: Callable[[Spec], bytes | str], chart: Spec | Callable[[], Spec]
) -> Callable[[], bytes | str]:
    return lambda: make(chart() if callable(chart) else chart)


def chart_panel(
    chart: Spec,
    data: pd.DataFrame,
    *,
    name: str,
    key: str,
    file_stem: str | None = None,
) -> None:
    """Show ``chart`` and offer it as PNG, SVG and CSV, in a container keyed ``key``
    (CSS class ``st-key-<key>``; buttons ``<key>_png``, ``<key>_svg``, ``<key>_csv``)."""
    stem = file_stem or _slug(name)
    with st.container(key=key):
        # the spec as st.altair_chart sent it (Altair's schema URL, no Streamlit theme),
        # in the dark page's colours; the downloads keep the paper colours
        shown = {"$schema": SCHEMA_URL, **for_dark(chart), "usermeta": CANVAS}
        fits = fits_column(chart)
        if fits:
            shown["autosize"] = FIT_WIDTH
        st.vega_lite_chart(
            shown, width="stretch" if fits else "content", theme=None, key=f"{key}_chart"
        )
        figure_downloads(chart, data, key=key, file_stem=stem)


def figure_downloads(
    chart: Spec | Callable[[], Spec], data: pd.DataFrame, *, key: str, file_stem: str
) -> None:
    """The PNG, SVG and CSV buttons of a figure (``<key>_png``, ``<key>_svg``,
    ``<key>_csv``); ``chart`` may be a callable, built only when a button is clicked
    (a figure drawn on the page by a component of ours: ui/components/matrix_view.py)."""
    png, svg, csv = st.columns([1, 1, 1], gap="small", width=420)
    png.download_button(
        "PNG",
        data=_lazy(chart_png, chart),
        file_name=f"{file_stem}.png",
        mime="image/png",
        key=f"{key}_png",
        on_click="ignore",
        icon=":material/image:",
    )
    svg.download_button(
        "SVG",
        data=_lazy(chart_svg, chart),
        file_name=f"{file_stem}.svg",
        mime="image/svg+xml",
        key=f"{key}_svg",
        on_click="ignore",
        icon=":material/draw:",
    )
    csv.download_button(
        "CSV",
        data=lambda: spreadsheet_csv(data),
        file_name=f"{file_stem}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
        icon=":material/table:",
    )
