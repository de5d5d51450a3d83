"""Lenient parsing of a model's raw answer into (diagnosis, likert, status).

Models answer in many shapes: bare JSON, JSON in a ```json fence, JSON inside
prose, Python-style dicts, "Diagnosis: ... / Likert: n" lines, or a plain
"I don't know". Anything we cannot read is a ``failure`` with diagnosis
PARSE_FAILED: a parser never invents an answer.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scoring.status import is_idk_text, is_missing_value

PARSE_FAILED: Final = "PARSE_FAILED"
DIAGNOSIS_KEYS: Final = ("diagnosis", "final_diagnosis", "answer", "dx", "prediction")
LIKERT_KEYS: Final = ("likert", "likert_score", "confidence", "certainty")

_FENCE = re.compile(r"```(?:json|JSON|javascript)?\s*(.*?)```", re.DOTALL)
_LINE_DX = re.compile(r"(?im)^\W*(?:final\s+)?diagnosis\W*[:=-]\s*(.+?)\s*$")
_LINE_LIKERT = re.compile(r"(?im)^\W*(?:likert(?:\s+score)?|confidence|certainty)\W*[:=-]\s*(\d+)")
_LEADING_INT = re.compile(r"^\s*(-?\d+)(?:\.0+)?(?:\s*/\s*4)?\s*$")


@dataclass(frozen=True)
class ParsedAnswer:
    """One parsed model answer; ``status`` is answered, idk, invalid or failure."""

    diagnosis: str
    likert: int | None
    status: str


def parse_likert_value(value: Any) -> int | None:
    """An integer Likert from 3, "3", "3.0" or "3/4"; None if absent or unreadable."""
    if isinstance(value, bool) or is_missing_value(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    match = _LEADING_INT.match(str(value))
    return int(match.group(1)) if match else None


def from_fields(diagnosis: Any, likert: Any) -> ParsedAnswer:
    """Status of a structured answer (SCORING.md section 1 order)."""
    if is_missing_value(diagnosis) or not isinstance(diagnosis, str | int | float):
        return ParsedAnswer(PARSE_FAILED, None, "failure")
    text = str(diagnosis).strip()
    if text.upper() == PARSE_FAILED:
        return ParsedAnswer(PARSE_FAILED, None, "failure")
    level = parse_likert_value(likert)
    if is_idk_text(text):
        return ParsedAnswer(text, level, "idk")
    if level is None or not 0 <= level <= 4:
        return ParsedAnswer(text, level, "invalid")
    return ParsedAnswer(text, level, "answered")


def _from_mapping(obj: Mapping[str, Any]) -> ParsedAnswer | None:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    dx_key = next((k for k in DIAGNOSIS_KEYS if k in lowered), None)
    if dx_key is None:
        return None
    likert = next((lowered[k] for k in LIKERT_KEYS if k in lowered), None)
    return from_fields(lowered[dx_key], likert)


def _objects(text: str) -> list[Any]:
    """Every JSON (or Python-literal) object found in the text, in order."""
    found: list[Any] = []
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            found.append(decoder.raw_decode(text, start)[0])
            continue
        except json.JSONDecodeError:
            pass
        end = text.find("}", start)
        while end != -1:  # single-quoted dicts: try each closing brace
            try:
                found.append(ast.literal_eval(text[start : end + 1]))
                break
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                end = text.find("}", end + 1)
    return found


def parse_model_output(text: Any) -> ParsedAnswer:
    """Read a raw model answer leniently. Garbage becomes a ``failure``."""
    if not isinstance(text, str) or not text.strip():
        return ParsedAnswer(PARSE_FAILED, None, "failure")
    body = text.strip()
    if is_idk_text(body):
        return ParsedAnswer(body, None, "idk")
    candidates = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    for candidate in candidates:
        for obj in _objects(candidate):
            if isinstance(obj, Mapping):
                parsed = _from_mapping(obj)
                if parsed is not None:
                    return parsed
    dx = _LINE_DX.search(body)
    if dx:
        likert = _LINE_LIKERT.search(body)
        return from_fields(dx.group(1).strip().strip("\"'*"), likert.group(1) if likert else None)
    return ParsedAnswer(PARSE_FAILED, None, "failure")
