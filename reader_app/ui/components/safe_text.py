"""Show user-supplied text so that it can never become markup.

Diagnoses, reader codes, model replies and imported CSV cells are stored
exactly as given (markdown, HTML, ``<script>``, SQL fragments, emoji,
right-to-left text). Every page and dashboard shows them through these helpers:

- ``show_text``: the default. ``st.text`` renders a plain, preformatted string;
  Streamlit interprets neither markdown nor HTML in it.
- ``show_table``: ``st.dataframe`` draws cells as text on a canvas; columns are
  configured as plain text (never link or image columns).
- ``escape_markdown``: when user text must sit inside markdown (a caption, a
  widget label, ``st.write``, ``st.success``): every markdown, directive
  (``:red[...]``, ``:material/x:``), LaTeX (``$``) and HTML character is
  backslash-escaped, and an invisible WORD JOINER (U+2060) goes before every
  ``.``, ``:`` and ``@`` and between two ``-``, so bare URLs and e-mail
  addresses do not become links and ``--`` does not become a dash. The
  visible text is exactly the stored text.
- ``html_text``: for ``st.html`` (HTML only, no markdown) or HTML a component
  builds itself. Never pass user text, escaped or not, to
  ``st.markdown(..., unsafe_allow_html=True)``: markdown would still apply.
- ``spreadsheet_safe`` (from ``reader_app.core.csv_safe``): every CSV a person opens
  goes through it, so a cell starting with ``=``, ``+``, ``-``, ``@``, tab or
  CR cannot run as a formula; ``readerstudy export --raw`` and Parquet are exact.
- ``reveal_controls``: shows bidirectional-override and other invisible
  characters as ``<U+202E>``, so an adjudicator sees what was typed, not a
  mirrored rendering of it.

The Chromium test tests/security/test_hostile_text_browser.py checks each one.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable

import pandas as pd
import streamlit as st

from reader_app.core.csv_safe import (
    spreadsheet_safe as spreadsheet_safe,  # the CSV rules live there
)

EMPTY = "—"
WORD_JOINER = "\u2060"

# CommonMark lets any ASCII punctuation be backslash-escaped; Streamlit adds
# directives (:color[..], :material/..:) and LaTeX ($), covered by ':' and '$'.
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
# a word joiner before these stops GFM autolinks (scheme://, www., user@host)
_LINK_TRIGGER = re.compile(r"([.:@])")
# bidi embeddings/overrides/isolates, marks, zero-width characters, BOM
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def escape_markdown(text: str | None) -> str:
    """Text that Streamlit's markdown shows literally (checked in Chromium by the tests)."""
    if text is None:
        return EMPTY
    defused = _LINK_TRIGGER.sub(WORD_JOINER + r"\1", text)
    while "--" in defused:  # typographic replacement would show "--" as a dash
        defused = defused.replace("--", "-" + WORD_JOINER + "-")
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", defused)
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")


def html_text(text: str | None) -> str:
    """HTML-escaped text (quotes too) for ``st.html``: direction isolated, breaks kept."""
    if text is None:
        return EMPTY
    return f'<bdi style="white-space: pre-wrap">{html.escape(text, quote=True)}</bdi>'


def reveal_controls(text: str | None) -> str | None:
    """Make invisible, direction-changing and control characters visible as <U+XXXX>."""
    if text is None:
        return None
    return "".join(
        f"<U+{ord(c):04X}>"
        if _INVISIBLE.match(c) or (unicodedata.category(c) == "Cc" and c not in "\n\t")
        else c
        for c in text
    )


def show_text(text: str | None, *, reveal: bool = False) -> None:
    """Render user text as plain text (no markdown, no HTML)."""
    if text is None or text == "":
        st.text(EMPTY)
        return
    st.text(reveal_controls(text) if reveal else text)


def text_columns(frame: pd.DataFrame) -> list[str]:
    return [
        str(c)
        for c in frame.columns
        if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])
    ]


def show_table(frame: pd.DataFrame, *, key: str | None = None, reveal: bool = False) -> None:
    """``st.dataframe`` with every text column configured as plain text."""
    shown = frame.copy()
    columns = text_columns(shown)
    for c in columns:  # a missing text value is an empty cell, never the word "None"
        shown[c] = shown[c].map(lambda v: "" if v is None or v is pd.NA else v)
    if reveal:
        for c in columns:
            shown[c] = shown[c].map(lambda v: reveal_controls(v) if isinstance(v, str) else v)
    config = {c: st.column_config.TextColumn(c) for c in columns}
    st.dataframe(shown, column_config=config, hide_index=True, key=key)


def safe_join(parts: Iterable[str | None], sep: str = ", ") -> str:
    """Join user strings for a markdown context (each part escaped; ``sep`` is trusted)."""
    return sep.join(escape_markdown(p) for p in parts)
