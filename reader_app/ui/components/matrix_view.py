"""The per-case matrix on the page: an ``st.components.v2`` element of ours.

``ui/static/matrix.js`` draws the responders x cases cells on a canvas, with the
pool's difficulty bars above them, an HTML legend and a tooltip; a click on a cell
sends its case id. Vega drew the same cells in 100-120 ms of the browser's main
thread on every visit of the page (issue 43: the page's second visit 1.3x a bare
page's); the figure for a paper (PNG, SVG) is still Vega's, from the same cells
(:func:`reader_app.charts.case_matrix_chart`), in the same colours and glyphs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from reader_app.charts.builders import (
    CELL_COLORS,
    CELL_STROKE,
    GLYPH_PX,
    GLYPHS,
    LABELLED_CASES,
    MATRIX_BAR,
    ink_on,
    matrix_width,
    matrix_x_title,
)
from reader_app.charts.theme import DARK_GRID, DARK_MUTED, DARK_SWAPS, DARK_TEXT
from reader_app.ui.components.case_viewer import sent_value, static_text

OPEN_EVENT = "open"
TITLE = "Per-case outcomes: who gets which case"
PANEL = "#1c212b"  # the theme's secondaryBackgroundColor: the tooltip's ground

_matrix = st.components.v2.component(
    "readerstudy_case_matrix",
    js=static_text("dom.js", "matrix.js"),
    css=static_text("matrix.css"),
    isolate_styles=True,
)


def _dark(colour: str) -> str:
    return DARK_SWAPS.get(colour, colour)


def matrix_data(cells: pd.DataFrame, cases: pd.DataFrame) -> dict[str, Any]:
    """What matrix.js draws: ``cases`` in their order (columns), the responders of
    ``cells`` humans first then models, each by name (rows), and one outcome index per
    cell, row by row. A cell ``cells`` lacks is "missing"."""
    order = [str(c) for c in cases["case_id"]]
    people = cells[["responder", "kind"]].astype(str).drop_duplicates("responder")
    people = people.sort_values(["kind", "responder"])
    outcomes = list(CELL_COLORS)
    index = {name: i for i, name in enumerate(outcomes)}
    rows = {r: i for i, r in enumerate(people["responder"])}
    cols = {c: j for j, c in enumerate(order)}
    codes = [index["missing"]] * (len(rows) * len(cols))
    likert: list[int | None] = [None] * len(codes)
    for r, c, o, lk in zip(
        cells["responder"].astype(str),
        cells["case_id"].astype(str),
        cells["outcome"].astype(str),
        cells["likert"],
        strict=True,
    ):
        if c in cols:
            at = rows[r] * len(cols) + cols[c]
            codes[at] = index.get(o, index["missing"])
            likert[at] = None if pd.isna(lk) else int(lk)
    return {
        "title": TITLE,
        "label": (
            f"Per-case outcomes of {len(rows)} responder(s) on {len(order)} case(s): hover a "
            "cell for its responder, case and outcome; click it to open its case below"
        ),
        "x_title": matrix_x_title(len(order)),
        "case_labels": len(order) <= LABELLED_CASES,
        "width": matrix_width(len(order)),
        "glyph_px": GLYPH_PX,
        "bar_color": MATRIX_BAR,
        "stroke": CELL_STROKE,
        "theme": {"text": DARK_TEXT, "muted": DARK_MUTED, "grid": DARK_GRID, "panel": PANEL},
        "responders": [
            {"name": r, "kind": str(k)}
            for r, k in zip(people["responder"], people["kind"], strict=True)
        ],
        "cases": [
            {
                "id": str(c),
                "difficulty": None if pd.isna(d) else float(d),
                "pool_accuracy": "" if pd.isna(a) else f"{a:.0%}",
                "split": str(s),
            }
            for c, d, a, s in zip(
                order, cases["difficulty"], cases["pool_accuracy"], cases["split"], strict=True
            )
        ],
        "outcomes": [
            {
                "name": o,
                "label": f"{GLYPHS[o]} {o}".strip(),
                "color": _dark(CELL_COLORS[o]),
                "glyph": GLYPHS[o],
                "ink": ink_on(CELL_COLORS[o]),
            }
            for o in outcomes
        ],
        "cells": codes,
        "likert": likert,
    }


def picked_case(key: str) -> str | None:
    """The case id a click on matrix ``key`` sent, in its callback (None otherwise)."""
    value = sent_value(key, OPEN_EVENT)
    return value if isinstance(value, str) else None


def matrix_view(
    cells: pd.DataFrame, cases: pd.DataFrame, *, key: str, on_open: Callable[[], None]
) -> None:
    """Draw the matrix; a click on a cell calls ``on_open`` (it reads :func:`picked_case`)."""
    _matrix(key=key, data=matrix_data(cells, cases), on_open_change=on_open)


__all__ = ["matrix_data", "matrix_view", "picked_case"]
