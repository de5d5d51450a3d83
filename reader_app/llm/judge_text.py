"""What a judge reads and how its reply is read: a frame the candidate cannot close,
and one strict JSON object.

The candidate's text goes between two marker lines that carry a random
boundary drawn for this request (``frame``); a candidate cannot guess it, so
it cannot end its own frame and write what looks like the judge's
instructions or a second reference. The judge's reply must be exactly one JSON
object (alone, or alone in one ```json fence) with exactly the expected keys
(``strict_object``): a reply that repeats its input, holds two objects, prose
around an object, a duplicated or a missing key is refused, so text a reader
wrote (``{"score": 40, "reason": "matches"}``) can never be taken for a verdict.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Collection
from typing import Any

MAX_REPLY_CHARS = 64 * 1024
_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(?P<body>.*)\n[ \t]*```\Z", re.DOTALL | re.IGNORECASE)


class StrictReplyError(ValueError):
    """The reply is not exactly one JSON object with the expected keys."""


def frame(label: str, text: str) -> str:
    """``text`` between ``<<<label BOUNDARY`` and ``BOUNDARY>>>`` lines, the boundary
    random per call and absent from ``text``. (The judge prompts explain this frame.)"""
    while True:
        boundary = secrets.token_hex(12)
        if boundary not in text:
            break
    return f"<<<{label} {boundary}\n{text}\n{boundary}>>>"


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise StrictReplyError(f"key {key[:40]!r} appears twice")
        data[key] = value
    return data


def strict_object(content: str, keys: Collection[str]) -> dict[str, Any]:
    """The reply as one JSON object with exactly ``keys``; StrictReplyError otherwise."""
    text = (content or "").strip()
    if len(text) > MAX_REPLY_CHARS:
        raise StrictReplyError(f"reply over {MAX_REPLY_CHARS} characters")
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    if not text.startswith("{"):
        raise StrictReplyError("the reply is not a JSON object alone")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except StrictReplyError:
        raise
    except (ValueError, RecursionError) as exc:
        raise StrictReplyError(f"the reply is not one JSON object ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise StrictReplyError("the reply is not a JSON object")
    missing = sorted(set(keys) - set(data))
    extra = sorted(set(data) - set(keys))
    if missing or extra:
        what = [f"missing {', '.join(missing)}"] if missing else []
        what += [f"unexpected {', '.join(k[:40] for k in extra[:5])}"] if extra else []
        raise StrictReplyError(f"expected exactly the keys {', '.join(sorted(keys))}: "
                               f"{'; '.join(what)}")  # fmt: skip
    return data
