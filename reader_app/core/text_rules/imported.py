"""Rules for text a coordinator imports (manifest fields, study.toml), the same on every database.

SQLite stores a NUL or a 10,000-character region without a word; PostgreSQL
refuses both with a raw ``DataError``. So every imported text field is checked
here first, with limits that match the columns in ``reader_app/models.py``,
and the message names the field and the problem (never the value).

Refused characters: NUL and other C0/C1 controls (tab and newlines only where
a field may hold several lines), Unicode format characters (bidi embeddings,
overrides and isolates, zero-width spaces and joiners, the BOM, ...),
surrogates and the line/paragraph separators.
"""

from __future__ import annotations

import unicodedata

from reader_app.core.text_rules.answers import ALLOWED_CONTROLS

# Unicode general categories refused outright: Cc control, Cf format (bidi
# overrides, zero-width characters), Cs surrogate, Zl/Zp line/paragraph separator.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

# Field limits in characters (the database columns are at least this wide).
MAX_CASE_ID = 200
MAX_DIAGNOSIS = 500
MAX_SYNONYMS = 4000  # all synonyms joined by '|'
MAX_HISTORY = 4000
MAX_REGION = 64
MAX_REFERENCE_REGION = 4000  # boxes, "slice:x,y,w,h;..." (a Text column)
MAX_REVIEWED_BY = 200
MAX_TITLE = 200
MAX_CONSENT = 20_000
MAX_LABEL = 200


def text_problem(value: str, *, max_chars: int, multiline: bool = False) -> str | None:
    """Why ``value`` cannot be stored, or None. Names the character by code point only."""
    if len(value) > max_chars:
        return f"is {len(value)} characters long; the limit is {max_chars}"
    for position, char in enumerate(value, start=1):
        if multiline and char in ALLOWED_CONTROLS:
            continue
        category = unicodedata.category(char)
        if category in _REFUSED_CATEGORIES:
            what = "a control" if category == "Cc" else "an invisible or direction-changing"
            return (
                f"holds {what} character U+{ord(char):04X} at position {position}; "
                "remove it (it can hide or reorder text)"
            )
    return None


def normalize_id(value: str) -> str:
    """NFKC: look-alike forms (fullwidth letters, ligatures) become one id."""
    return unicodedata.normalize("NFKC", value)


__all__ = ["normalize_id", "text_problem"]
