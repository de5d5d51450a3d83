"""A report answer's rules: the same confidence rule as a diagnosis (no database)."""

from __future__ import annotations

import re

import pytest

from reader_app.exam.report_submit import ReportAnswer, validate_report
from reader_app.exam.submit import AnswerError, validate_answer


@pytest.mark.parametrize(
    ("likert", "message"),
    [
        (None, "Choose your confidence (0-4)."),
        (5, "Confidence must be a whole number from 0 to 4."),
        (-1, "Confidence must be a whole number from 0 to 4."),
        (True, "Confidence must be a whole number from 0 to 4."),
    ],
)
def test_a_report_and_a_diagnosis_refuse_the_same_confidences(likert: object, message: str) -> None:
    with pytest.raises(AnswerError, match=re.escape(message)):
        validate_report("No effusion.", "Normal chest.", likert, False)  # type: ignore[arg-type]
    with pytest.raises(AnswerError, match=re.escape(message)):
        validate_answer("Pneumothorax", likert, False)  # type: ignore[arg-type]


def test_a_report_keeps_its_texts_and_confidence_and_idk_carries_nothing() -> None:
    assert validate_report(" No effusion. ", "Normal chest.", 0, False) == ReportAnswer(
        "No effusion.", "Normal chest.", 0, False
    )
    assert validate_report("x", "y", 3, True) == ReportAnswer(None, None, None, True)
