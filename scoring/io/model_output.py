"""Lenient, total and bounded parsing of a model's raw answer into (diagnosis, likert, status).

Models answer in many shapes: bare JSON, JSON in a ```json fence, JSON inside
prose, Python-style dicts, "Diagnosis: ... / Likert: n" lines, or a plain
"I don't know". Anything we cannot read is a ``failure`` with diagnosis
PARSE_FAILED: a parser never invents an answer.

The parser is *total* and *bounded* because its input comes from a server we
do not control:

- for any value it returns a ``ParsedAnswer`` and never raises;
- a reply longer than ``MAX_REPLY_CHARS`` (64 KiB of text) is a failure
  without being read (the caller keeps the raw text);
- below that it runs in time linear in the length: one pass finds the
  balanced ``{...}`` spans (outside quoted strings), only the outermost spans
  are decoded (they do not overlap), spans nested deeper than ``MAX_DEPTH``
  are skipped before any decoder sees them (a span that fails to decode is
  searched inside, at most ``MAX_DESCENT`` levels down), numbers longer than
  ``MAX_NUMBER_DIGITS`` are not converted, and the line patterns are matched
  once per line with no nested quantifiers. No ``ast.literal_eval``: a
  Python-style dict is rewritten to JSON by a one-pass scanner.

New parse modes (a structured report, a location field) belong in
``ParseMode``-like additions beside ``parse_model_output``; they should reuse
``json_objects`` so they inherit the same bounds.
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from scoring.status import is_idk_text, is_missing_value

PARSE_FAILED: Final = "PARSE_FAILED"
DIAGNOSIS_KEYS: Final = ("diagnosis", "final_diagnosis", "answer", "dx", "prediction")
LIKERT_KEYS: Final = ("likert", "likert_score", "confidence", "certainty")
MAX_REPLY_CHARS: Final = 65_536
MAX_DEPTH: Final = 32
MAX_DESCENT: Final = 4
MAX_NUMBER_DIGITS: Final = 6

# one anchored attempt per line; no quantifier is nested in another
_LINE_DX = re.compile(r"\W*(?:final\s+)?diagnosis\W*?[:=-]", re.IGNORECASE)
_LINE_LIKERT = re.compile(
    r"\W*(?:likert(?:\s+score)?|confidence|certainty)\W*?[:=-]\s*(\d+)", re.IGNORECASE
)
_LEADING_INT = re.compile(r"\s*(-?\d+)(?:\.0+)?(?:\s*/\s*4)?\s*")
_FENCE_TAGS: Final = ("json", "JSON", "javascript")


@dataclass(frozen=True)
class ParsedAnswer:
    """One parsed model answer; ``status`` is answered, idk, invalid or failure."""

    diagnosis: str
    likert: int | None
    status: str


FAILED: Final = ParsedAnswer(PARSE_FAILED, None, "failure")


def parse_likert_value(value: Any) -> int | None:
    """An integer Likert from 3, "3", "3.0" or "3/4"; None if absent, unreadable or huge."""
    if isinstance(value, bool) or is_missing_value(value):
        return None
    if isinstance(value, numbers.Integral):
        return int(value) if abs(int(value)) < 10**MAX_NUMBER_DIGITS else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 10**MAX_NUMBER_DIGITS else None
    if not isinstance(value, str) or len(value) > 40:
        return None
    match = _LEADING_INT.fullmatch(value)
    if match is None or len(match.group(1).lstrip("-")) > MAX_NUMBER_DIGITS:
        return None
    return int(match.group(1))


def from_fields(diagnosis: Any, likert: Any) -> ParsedAnswer:
    """Status of a structured answer (SCORING.md section 1 order)."""
    if isinstance(diagnosis, bool) or is_missing_value(diagnosis):
        return FAILED
    if not isinstance(diagnosis, str | int | float):
        return FAILED
    if isinstance(diagnosis, int) and abs(diagnosis) >= 10**MAX_NUMBER_DIGITS:
        return FAILED  # str() of a huge int is refused by Python itself
    text = str(diagnosis).strip()  # kept whole: a reply is capped at MAX_REPLY_CHARS already
    if text.upper() == PARSE_FAILED:
        return FAILED
    level = parse_likert_value(likert)
    if is_idk_text(text):
        return ParsedAnswer(text, level, "idk")
    if level is None or not 0 <= level <= 4:
        return ParsedAnswer(text, level, "invalid")
    return ParsedAnswer(text, level, "answered")


def _from_mapping(obj: Mapping[Any, Any]) -> ParsedAnswer | None:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    dx_key = next((k for k in DIAGNOSIS_KEYS if k in lowered), None)
    if dx_key is None:
        return None
    likert = next((lowered[k] for k in LIKERT_KEYS if k in lowered), None)
    return from_fields(lowered[dx_key], likert)


def outer_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost balanced ``{...}``, braces in quotes ignored.

    One pass with a stack of open positions; an unmatched ``{`` is dropped when
    the text ends, so the objects after a stray brace are still found. The
    spans returned never overlap.
    """
    stack: list[int] = []
    pairs: list[tuple[int, int]] = []
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote or ch == "\n":
                quote = ""
        elif ch == "{":
            stack.append(i)
        elif ch == "}":
            if stack:
                pairs.append((stack.pop(), i + 1))
        elif ch in "\"'" and stack:
            quote = ch
    # pairs close in order of their end; keep those not inside a later (outer) pair
    outer: list[tuple[int, int]] = []
    for start, end in reversed(pairs):
        if not outer or end <= outer[-1][0]:
            outer.append((start, end))
    outer.reverse()
    return outer


def _depth(span: str) -> int:
    """Deepest nesting of brackets and braces outside quoted strings."""
    depth = deepest = 0
    quote = ""
    escaped = False
    for ch in span:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth = max(depth - 1, 0)
        elif ch in "\"'":
            quote = ch
    return deepest


_PY_WORDS: Final = {"True": "true", "False": "false", "None": "null"}


def pythonish_to_json(span: str) -> str:
    """Rewrite a Python-style dict (single quotes, True/False/None) as JSON, in one pass."""
    out: list[str] = []
    i, n = 0, len(span)
    while i < n:
        ch = span[i]
        if ch in "\"'":
            j = i + 1
            chars: list[str] = []
            while j < n and span[j] != ch:
                if span[j] == "\\" and j + 1 < n:
                    nxt = span[j + 1]
                    chars.append(nxt if nxt in "'\"\\" else "\\" + nxt)
                    j += 2
                    continue
                chars.append(span[j])
                j += 1
            out.append(json.dumps("".join(chars)))
            i = j + 1
        elif ch.isalpha():
            j = i
            while j < n and (span[j].isalnum() or span[j] == "_"):
                j += 1
            word = span[i:j]
            out.append(_PY_WORDS.get(word, word))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _bounded_int(digits: str) -> int | None:
    """JSON integers past MAX_NUMBER_DIGITS become None (Python refuses > 4300 digits)."""
    return int(digits) if len(digits.lstrip("-")) <= MAX_NUMBER_DIGITS else None


def _decode(span: str) -> Any:
    for attempt in (span, None):
        try:
            source = attempt if attempt is not None else pythonish_to_json(span)
            return json.loads(source, parse_int=_bounded_int)
        except (ValueError, RecursionError, MemoryError):
            continue
    return None


def _mappings(obj: Any, depth: int = 0) -> Iterator[Mapping[Any, Any]]:
    """Every mapping in a decoded value, outer before inner, in document order."""
    if depth > MAX_DEPTH:
        return
    if isinstance(obj, Mapping):
        yield obj
        children: Any = obj.values()
    elif isinstance(obj, list):
        children = obj
    else:
        return
    for child in children:
        yield from _mappings(child, depth + 1)


def json_objects(text: str, _level: int = 0) -> Iterator[Mapping[Any, Any]]:
    """Every JSON (or Python-literal) mapping found in the text, in order, within the bounds.

    A span that does not decode (prose in braces) is searched inside, at most
    ``MAX_DESCENT`` levels down, so the work stays linear (at most that many passes).
    """
    for start, end in outer_spans(text):
        span = text[start:end]
        if _depth(span) > MAX_DEPTH:
            continue
        decoded = _decode(span)
        if decoded is not None:
            yield from _mappings(decoded)
        elif _level < MAX_DESCENT:
            yield from json_objects(span[1:-1], _level + 1)


def fenced_blocks(text: str) -> list[str]:
    """The contents of ```-fenced blocks (a json/javascript tag dropped), found with str.find."""
    marks: list[int] = []
    at = text.find("```")
    while at != -1:
        marks.append(at)
        at = text.find("```", at + 3)
    blocks = []
    for open_at, close_at in zip(marks[0::2], marks[1::2], strict=False):
        inner = text[open_at + 3 : close_at]
        for tag in _FENCE_TAGS:
            if inner.startswith(tag):
                inner = inner[len(tag) :]
                break
        blocks.append(inner.strip())
    return blocks


def _line_answer(body: str) -> ParsedAnswer | None:
    diagnosis: str | None = None
    likert: str | None = None
    for line in body.splitlines():
        if diagnosis is None and (dx := _LINE_DX.match(line)):
            diagnosis = line[dx.end() :].strip().strip("\"'*").strip() or None
        if likert is None and (lk := _LINE_LIKERT.match(line)):
            likert = lk.group(1)
    if diagnosis is None:
        return None
    return from_fields(diagnosis, likert)


def parse_model_output(text: Any) -> ParsedAnswer:
    """Read a raw model answer leniently. Garbage (or a reply over the cap) is a ``failure``."""
    try:
        return _parse(text)
    except Exception:  # totality: a parser bug must not stop a run
        return FAILED


def _parse(text: Any) -> ParsedAnswer:
    if not isinstance(text, str) or len(text) > MAX_REPLY_CHARS or not text.strip():
        return FAILED
    body = text.strip()
    if is_idk_text(body):
        return ParsedAnswer(body, None, "idk")
    for candidate in [*fenced_blocks(body), body]:
        for obj in json_objects(candidate):
            parsed = _from_mapping(obj)
            if parsed is not None:
                return parsed
    return _line_answer(body) or FAILED
