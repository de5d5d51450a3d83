"""CSV that a person opens in a spreadsheet: text cells can never run as formulas.

Excel, LibreOffice and Google Sheets treat a cell that starts with ``=``,
``+``, ``-`` or ``@`` (and, through tab/CR tricks, one starting with a tab or a
carriage return) as a formula: ``=HYPERLINK("http://...","click")`` becomes a
live link, and worse formulas exist. Every CSV the app or the CLI writes for
people (exports, the answer key, progress, invites, chart data) goes through
``spreadsheet_csv`` or ``spreadsheet_safe``, which prefix such a text cell with
an apostrophe, the OWASP remedy: the spreadsheet shows the text, the apostrophe
is not displayed. Numbers are never touched (a negative number stays a number).

Scripts that need exact text ask for it: ``readerstudy export --raw``, and
Parquet exports are always exact. ``parse_key_csv`` strips the apostrophe again
(``spreadsheet_unsafe``), so a downloaded key uploads unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
LINE_END = "\r\n"


def spreadsheet_safe(text: str | None) -> str | None:
    """Prefix a leading formula character with an apostrophe (OWASP CSV injection)."""
    if text and text.startswith(FORMULA_START):
        return "'" + text
    return text


def spreadsheet_unsafe(text: str) -> str:
    """Undo ``spreadsheet_safe`` (for CSV files the app wrote and reads back)."""
    if text.startswith("'") and text[1:].startswith(FORMULA_START):
        return text[1:]
    return text


def safe_cells(values: Iterable[Any]) -> list[Any]:
    """One CSV row: text cells defused, anything else as it is."""
    return [spreadsheet_safe(v) if isinstance(v, str) else v for v in values]


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells (in any column) are defused; numbers untouched."""
    safe = frame.copy()
    for column in safe.columns:
        series = safe[column]
        if series.dtype == object or pd.api.types.is_string_dtype(series):
            safe[column] = series.map(lambda v: spreadsheet_safe(v) if isinstance(v, str) else v)
    return safe


def spreadsheet_csv(frame: pd.DataFrame, *, raw: bool = False) -> str:
    """``frame.to_csv(index=False)``, defused unless ``raw``.

    Defused CSV ends its lines with CRLF (RFC 4180, as spreadsheets write it):
    then a carriage return inside a cell is quoted too, where pandas' default
    ``\n`` leaves it bare and a reader splits the row there.
    """
    if raw:
        return frame.to_csv(index=False)
    return safe_frame(frame).to_csv(index=False, lineterminator=LINE_END)


__all__ = [
    "FORMULA_START",
    "LINE_END",
    "safe_cells",
    "safe_frame",
    "spreadsheet_csv",
    "spreadsheet_safe",
    "spreadsheet_unsafe",
]
