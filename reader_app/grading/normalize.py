"""Normalization of free-text diagnoses for exact matching and grade memory.

Only cosmetic differences are removed: case, unicode forms, quotes,
punctuation, hyphens, whitespace and a leading article. Nothing here is fuzzy:
"pectus excavatum" and "pectus carinatum" stay different strings.

A leading article must be a word of its own, followed by whitespace: "The
pneumothorax" loses it, but the letter in "A-lines" or "A-fib" is part of the
term and stays ("a lines" != "lines").
"""

from __future__ import annotations

import re
import unicodedata

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"'})
_APOSTROPHE_S = re.compile(r"'s\b")
_LEADING_PUNCT = re.compile(r"^[^\w]+", re.UNICODE)
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+")


def normalize_answer(text: str | None) -> str:
    """Canonical form used as the grade-memory key; '' for empty input."""
    if not text:
        return ""
    s = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    s = _LEADING_PUNCT.sub("", s.strip())
    s = _ARTICLE.sub("", s)  # before punctuation becomes space: "a-fib" keeps its "a"
    s = _APOSTROPHE_S.sub("s", s)  # "Crohn's" == "Crohns"
    s = s.replace("_", " ")
    s = _PUNCT.sub(" ", s)  # hyphens, commas, dots, brackets -> space
    return _SPACE.sub(" ", s).strip()
