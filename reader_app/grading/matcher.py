"""Exact matching after normalization, and fuzzy *suggestions* for humans.

The only automatic acceptance is ``matches_key``: the normalized answer equals
the normalized reference or a normalized synonym. ``rank_suggestions`` uses
rapidfuzz to order hints for an adjudicator and never decides anything:
"pectus carinatum" is one word-edit from "pectus excavatum" and a different
entity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from reader_app.grading.key import KeyEntry
from reader_app.grading.normalize import normalize_answer


def matches_key(answer: str | None, entry: KeyEntry) -> bool:
    """True only for an exact match after normalization; '' never matches."""
    norm = normalize_answer(answer)
    return bool(norm) and norm in entry.accepted


def matches_normalized(normalized_answer: str, entry: KeyEntry) -> bool:
    return bool(normalized_answer) and normalized_answer in entry.accepted


@dataclass(frozen=True)
class Suggestion:
    """A hint for the adjudicator: a similar key form or an already-graded answer."""

    text: str
    similarity: float  # 0..100, rapidfuzz WRatio on normalized text
    source: str  # "key" or "graded"
    correct: int | None = None  # the verdict of a graded answer


def rank_suggestions(
    candidate: str,
    entry: KeyEntry,
    graded: Mapping[str, int] | None = None,
    *,
    limit: int = 3,
) -> tuple[Suggestion, ...]:
    """The key forms and graded answers most similar to the candidate, best first.

    ``graded`` maps normalized answers already decided for this case to their
    verdict. The result is for display only.
    """
    norm = normalize_answer(candidate)
    if not norm:
        return ()
    choices: dict[str, tuple[str, str, int | None]] = {}
    for text in (entry.diagnosis, *entry.synonyms):
        choices.setdefault(normalize_answer(text), (text, "key", None))
    for other, correct in (graded or {}).items():
        if other != norm:
            choices.setdefault(other, (other, "graded", correct))
    ranked = process.extract(norm, list(choices), scorer=fuzz.WRatio, limit=limit)
    return tuple(
        Suggestion(
            text=choices[match][0],
            similarity=round(float(score), 1),
            source=choices[match][1],
            correct=choices[match][2],
        )
        for match, score, _ in ranked
    )
