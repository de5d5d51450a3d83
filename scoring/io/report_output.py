"""Strict, bounded parsing of a model's report: ``{"findings": ..., "impression": ...}``.

Bench 2 asks for strict JSON. We accept that object bare, in a ```json fence
or inside a little prose, and nothing looser: anything else is a ``failure``
(a parser never invents a report). Input is cut at ``MAX_INPUT_CHARS`` before
any work and each field at ``MAX_FIELD_CHARS``, so a runaway reply costs a
bounded amount of time and storage.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

MAX_INPUT_CHARS: Final = 100_000
MAX_FIELD_CHARS: Final = 8_000
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParsedReport:
    """``status`` is ``answered`` (an impression, maybe findings) or ``failure``."""

    findings: str | None
    impression: str | None
    status: str
    error: str | None = None


def _candidates(text: str) -> list[str]:
    found = [text, *_FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        found.append(text[start : end + 1])
    return found


def _field(data: dict[str, object], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(value)  # a bulleted list of findings is still the findings
    if not isinstance(value, str):
        raise TypeError(key)
    value = value.replace("\x00", "").strip()
    return value[:MAX_FIELD_CHARS] or None


def parse_report(text: str | None) -> ParsedReport:
    """A model's raw reply -> findings and impression, or a failure saying why."""
    body = (text or "")[:MAX_INPUT_CHARS].strip()
    if not body:
        return ParsedReport(None, None, "failure", "empty reply")
    for chunk in _candidates(body):
        try:
            data = json.loads(chunk)
        except (json.JSONDecodeError, RecursionError):
            continue
        if not isinstance(data, dict) or not ({"findings", "impression"} & set(data)):
            continue
        try:
            findings, impression = _field(data, "findings"), _field(data, "impression")
        except TypeError as exc:
            return ParsedReport(None, None, "failure", f"'{exc}' is not text")
        if impression is None and findings is None:
            return ParsedReport(None, None, "failure", "findings and impression are empty")
        return ParsedReport(findings, impression, "answered")
    return ParsedReport(None, None, "failure", 'no JSON object with "findings"/"impression"')
