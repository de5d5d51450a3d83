"""Lenient parsing of raw model answers."""

from __future__ import annotations

import pytest

from scoring.io import PARSE_FAILED, parse_model_output


@pytest.mark.parametrize(
    ("text", "diagnosis", "likert"),
    [
        ('{"diagnosis": "Mucocele", "likert": 3}', "Mucocele", 3),
        ('{"diagnosis": "Mucocele", "likert_score": 4}', "Mucocele", 4),
        ('```json\n{"diagnosis": "CCF", "likert": "2"}\n```', "CCF", 2),
        ('Sure! Here is my answer: {"Diagnosis": "CCF", "Likert": 1}. Hope it helps', "CCF", 1),
        ("{'diagnosis': 'Renal artery aneurysm', 'likert': 0}", "Renal artery aneurysm", 0),
        ('{"answer": "CCF", "confidence": "4/4"}', "CCF", 4),
        ('{"diagnosis": "CCF", "likert": 3.0}', "CCF", 3),
        ("Diagnosis: Carotid-cavernous fistula\nLikert: 4", "Carotid-cavernous fistula", 4),
        ("**Final diagnosis:** Mucocele\nConfidence: 2", "Mucocele", 2),
        ('{"meta": {"x": 1}, "diagnosis": "CCF", "likert": 2}', "CCF", 2),
    ],
)
def test_answers(text: str, diagnosis: str, likert: int) -> None:
    parsed = parse_model_output(text)
    assert (parsed.diagnosis, parsed.likert, parsed.status) == (diagnosis, likert, "answered")


@pytest.mark.parametrize(
    "text",
    [
        "I don't know",
        "Idon't know",
        "IDK.",
        '{"diagnosis": "I dont know", "likert": 0}',
        '```json\n{"diagnosis": "I don\'t know", "likert_score": null}\n```',
    ],
)
def test_idk(text: str) -> None:
    assert parse_model_output(text).status == "idk"


@pytest.mark.parametrize(
    ("text", "likert"),
    [('{"diagnosis": "CCF", "likert": 7}', 7), ('{"diagnosis": "CCF"}', None)],
)
def test_invalid_likert(text: str, likert: int | None) -> None:
    parsed = parse_model_output(text)
    assert (parsed.diagnosis, parsed.likert, parsed.status) == ("CCF", likert, "invalid")


@pytest.mark.parametrize(
    "text",
    [None, "", "   ", "lorem ipsum", '{"foo": 1}', "{not json", "[1, 2, 3]", "PARSE_FAILED",
     '{"diagnosis": null, "likert": 3}'],
)  # fmt: skip
def test_garbage_is_failure(text: object) -> None:
    parsed = parse_model_output(text)
    assert (parsed.diagnosis, parsed.status) == (PARSE_FAILED, "failure")
