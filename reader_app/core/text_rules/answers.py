"""One text policy for answers from people and models, the same on SQLite and PostgreSQL.

Forbidden in answer text: control characters (Unicode category Cc: NUL,
escape, bell, DEL, C1 controls...) other than tab, line feed and carriage
return, and lone surrogates (Cs), which no UTF-8 database column can hold.
PostgreSQL refuses NUL outright while SQLite stores it, so the rule is
applied here, before either database sees the text:

- a person's answer containing them is refused (they can retype it):
  ``exam.submit.validate_answer`` calls ``forbidden_characters``;
- a model's diagnosis has them removed (a model cannot be asked to retype)
  and the number removed is recorded with the row: ``clean_model_text``;
- a model's raw reply is kept whole. If it holds a NUL or a lone surrogate
  it is stored as a JSON string literal, flagged in the row's metadata
  (``raw_reply_encoding: "json"``), and ``recover_raw`` gives back the exact
  text: ``store_raw``.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any, Final

ALLOWED_CONTROLS: Final = frozenset("\t\n\r")
RAW_ENCODING_KEY: Final = "raw_reply_encoding"


def is_forbidden(ch: str) -> bool:
    category = unicodedata.category(ch)
    return (category == "Cc" and ch not in ALLOWED_CONTROLS) or category == "Cs"


def forbidden_characters(text: str) -> list[str]:
    """The forbidden characters in ``text``, in order (empty when the text is clean)."""
    return [ch for ch in text if is_forbidden(ch)]


def clean_model_text(text: str) -> tuple[str, int]:
    """``text`` without forbidden characters, and how many were removed."""
    kept = "".join(ch for ch in text if not is_forbidden(ch))
    return kept, len(text) - len(kept)


def _unstorable(text: str) -> bool:
    return "\x00" in text or any(unicodedata.category(ch) == "Cs" for ch in text)


def store_raw(text: str | None) -> tuple[str | None, dict[str, Any]]:
    """(what to store, metadata to add): the raw reply as is, or JSON-escaped when a
    database would refuse it (NUL on PostgreSQL, lone surrogates on both)."""
    if text is None or not _unstorable(text):
        return text, {}
    return json.dumps(text, ensure_ascii=True), {RAW_ENCODING_KEY: "json"}


def recover_raw(stored: str | None, meta: Mapping[str, Any]) -> str | None:
    """The exact raw reply a model sent, from what ``store_raw`` stored."""
    if stored is not None and meta.get(RAW_ENCODING_KEY) == "json":
        value = json.loads(stored)
        return value if isinstance(value, str) else stored
    return stored
