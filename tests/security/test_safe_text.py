"""The escaping helpers the dashboards use (their rendering is checked in Chromium too)."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from reader_app.ui.components.safe_text import (
    WORD_JOINER,
    escape_markdown,
    html_text,
    reveal_controls,
    safe_join,
    spreadsheet_safe,
)
from tests.security.hostile import HOSTILE_TEXTS


def test_escape_markdown_escapes_every_ascii_punctuation_mark() -> None:
    assert escape_markdown("**b**") == r"\*\*b\*\*"
    assert escape_markdown("<script>") == r"\<script\>"
    assert escape_markdown(":red[x] $y$") == "\\:red\\[x\\] \\$y\\$".replace(
        "\\:", WORD_JOINER + "\\:"
    )
    # links and typography are defused by invisible word joiners; the letters stay
    assert escape_markdown("a--b").replace(WORD_JOINER, "") == r"a\-\-b"
    assert escape_markdown("www.x.org").replace(WORD_JOINER, "") == r"www\.x\.org"
    assert escape_markdown("line1\nline2") == "line1  \nline2"  # a hard break, as typed
    assert escape_markdown(None) == "—"
    for text in HOSTILE_TEXTS.values():
        unescaped = escape_markdown(text).replace(WORD_JOINER, "").replace("  \n", "\n")
        assert unescaped.replace("\\", "") == text.replace("\\", "").replace("\r\n", "\n")


def test_html_text_escapes_markup_and_quotes() -> None:
    out = html_text("<img src=x onerror=\"alert(1)\"> & 'q'")
    assert "<img" not in out and "&lt;img" in out and "&quot;" in out and "&#x27;" in out
    assert out.startswith("<bdi") and out.endswith("</bdi>")


def test_spreadsheet_safe_defuses_formulas_only() -> None:
    for formula in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"):
        assert spreadsheet_safe(formula) == "'" + formula
    for plain in ("Pneumothorax", "1-2 cm", "", None, "a=b"):
        assert spreadsheet_safe(plain) == plain


def test_reveal_controls_shows_what_is_invisible() -> None:
    assert reveal_controls("normal\u202elamron\u202c") == "normal<U+202E>lamron<U+202C>"
    assert reveal_controls("a\u200bb\x00c\x1b[31m") == "a<U+200B>b<U+0000>c<U+001B>[31m"
    assert reveal_controls("ورم 🦴\nline\ttab") == "ورم 🦴\nline\ttab"  # real text untouched
    assert reveal_controls(None) is None


def test_safe_join_escapes_each_part() -> None:
    assert safe_join(["*a*", "b_"]) == r"\*a\*, b\_"


def _page() -> None:
    import pandas as pd
    import streamlit as st

    from reader_app.ui.components.safe_text import show_table, show_text

    show_text(st.session_state["text"])
    show_text(None)
    show_table(pd.DataFrame({"d": [st.session_state["text"]], "n": [1]}), reveal=True)


def test_show_text_and_show_table_render_plain_text() -> None:
    text = HOSTILE_TEXTS["bidi"] + " " + HOSTILE_TEXTS["html"]
    at = AppTest.from_function(_page)
    at.session_state["text"] = text
    at.run()
    assert not at.exception
    assert [t.value for t in at.text] == [text, "—"]
    assert at.markdown == []  # nothing went through markdown
    shown = at.dataframe[0].value
    assert isinstance(shown, pd.DataFrame)
    assert shown.loc[0, "d"] == reveal_controls(text)
