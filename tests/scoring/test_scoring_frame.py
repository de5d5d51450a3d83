"""Input validation and status derivation (SCORING.md section 1)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest

from scoring import FrameError, UngradedRowsError, is_idk_text, validate_frame


def one(**fields: object) -> dict:
    row = {"responder": "m", "kind": "model", "case_id": "1", "diagnosis": "dx", "likert": 3}
    row.update(correct=1)
    row.update(fields)
    return row


def status_of(**fields: object) -> str:
    return str(validate_frame([one(**fields)], require_verdicts=False)["status"].iloc[0])


@pytest.mark.parametrize(
    "text",
    [
        "I don't know",
        "I dont know",
        "Idon't know",
        "IDK",
        "idk.",
        "i DON\u2019T KNOW",
        " I don`t know ",
    ],
)
def test_idk_spellings(text: str) -> None:
    assert is_idk_text(text)
    assert status_of(diagnosis=text, likert=None) == "idk"


@pytest.mark.parametrize("text", ["I know", "don't know", "Mucocele", "", None])
def test_not_idk(text: object) -> None:
    assert not is_idk_text(text)


def test_status_order() -> None:
    # failure beats idk beats invalid beats answered
    assert status_of(diagnosis="PARSE_FAILED") == "failure"
    assert status_of(technical_failure="True", diagnosis="I don't know") == "failure"
    assert status_of(diagnosis="IDK", likert=4) == "idk"
    assert status_of(likert=5) == "invalid"
    assert status_of(likert=2.5) == "invalid"
    assert status_of(likert="") == "invalid"
    assert status_of(diagnosis="", likert=3) == "invalid"  # a row with no answer
    assert status_of(likert="4") == "answered"
    assert status_of(likert=0) == "answered"


def test_explicit_status_is_kept_and_checked() -> None:
    assert status_of(status="idk", diagnosis="") == "idk"
    with pytest.raises(FrameError, match="unknown status"):
        validate_frame([one(status="skipped")])
    with pytest.raises(FrameError, match="needs a Likert"):
        validate_frame([one(status="answered", likert=None)])


def test_verdict_column_stands_in_for_correct() -> None:
    rows = [
        one(case_id="1", correct=None, verdict="correct"),
        one(case_id="2", correct=None, verdict="incorrect"),
        one(case_id="3", correct="", verdict="pending", diagnosis="IDK"),
    ]
    frame = validate_frame(rows)
    assert frame["correct"].tolist()[:2] == [1, 0]
    assert pd.isna(frame["correct"].iloc[2])


def test_ungraded_answered_rows_are_listed() -> None:
    rows = [one(case_id="7", correct=None), one(case_id="8", correct=""), one(case_id="9")]
    with pytest.raises(UngradedRowsError) as info:
        validate_frame(rows)
    assert info.value.rows == [("m", "7"), ("m", "8")]
    assert "m/7" in str(info.value) and "m/8" in str(info.value)
    # not answered -> no verdict needed
    validate_frame([one(diagnosis="IDK", correct=None)])


def test_bad_values_are_errors() -> None:
    with pytest.raises(FrameError, match="kind"):
        validate_frame([one(kind="robot")])
    with pytest.raises(FrameError, match=r"verdict|correct"):
        validate_frame([one(correct="maybe")])
    with pytest.raises(FrameError, match="duplicate"):
        validate_frame([one(), one()])
    with pytest.raises(FrameError, match="more than one kind or group"):
        validate_frame([one(case_id="1"), one(case_id="2", kind="human")])
    with pytest.raises(FrameError, match="missing required"):
        validate_frame([{"responder": "m", "case_id": "1"}])
    with pytest.raises(FrameError, match="empty"):
        validate_frame([one(responder="")])


def test_empty_input_gives_empty_tidy_frame() -> None:
    for data in ([], pd.DataFrame()):
        frame = validate_frame(data)
        assert len(frame) == 0
        assert list(frame.columns) == [
            "responder", "kind", "group", "case_id", "status", "diagnosis", "likert", "correct",
        ]  # fmt: skip


def test_types_are_normalised(make_rows: Callable) -> None:
    frame = validate_frame([one(case_id=7, likert="3.0", kind=" Human ", group="")])
    row = frame.iloc[0]
    assert row["case_id"] == "7" and row["kind"] == "human" and row["group"] is None
    assert row["likert"] == 3 and row["correct"] == 1


def test_validating_twice_changes_nothing() -> None:
    rows = [one(case_id="1"), one(case_id="2", diagnosis="IDK", likert=None, correct=None),
            one(case_id="3", likert=9, correct=None)]  # fmt: skip
    once = validate_frame(rows)
    assert once.equals(validate_frame(once))
    assert once["status"].tolist() == ["answered", "idk", "invalid"]


def test_numeric_and_nullable_columns() -> None:
    frame = pd.DataFrame(
        {
            "responder": ["m", "m"],
            "kind": ["model", "model"],
            "case_id": [1, 2],
            "diagnosis": ["a", "b"],
            "likert": pd.array([4, 2], dtype="Int64"),
            "correct": [1.0, 0.0],
        }
    )
    out = validate_frame(frame)
    assert out["correct"].tolist() == [1, 0] and out["case_id"].tolist() == ["1", "2"]
