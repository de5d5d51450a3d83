"""Model-output JSONL/CSV loaders and the responses CSV reader."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scoring import FrameError, ScoringParams, score_responses, validate_frame
from scoring.io import read_model_csv, read_model_jsonl, read_responses_csv


def test_jsonl_structured_and_raw(tmp_path: Path) -> None:
    lines = [
        {"case_id": "1", "model": "m", "diagnosis": "CCF", "likert": 4, "correct": 1},
        {"case_id": "2", "model": "m", "output": '```json\n{"diagnosis": "X", "likert": 1}\n```',
         "verdict": "incorrect"},
        {"case_id": "3", "model": "m", "output": "I don't know"},
        {"case_id": "4", "model": "m", "output": "garbage"},
    ]  # fmt: skip
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    frame = read_model_jsonl(path)
    assert frame["status"].tolist() == ["answered", "answered", "idk", "failure"]
    assert frame["likert"].tolist()[:2] == [4, 1]
    # +5 -2 + 0 + 0 = 3 over N = 4 -> C = 1000 (1 + 3/20) = 1150
    report = score_responses(frame, ScoringParams(n_boot=0))
    assert report["responders"][0]["radle_c"] == pytest.approx(1150.0)


def test_csv_with_responder_argument() -> None:
    csv = "case_id,diagnosis,likert_score,correct\n1,CCF,3,1\n2,I don't know,,\n"
    frame = validate_frame(read_model_csv(io.StringIO(csv), responder="run-7"))
    assert frame["responder"].unique().tolist() == ["run-7"]
    assert frame["status"].tolist() == ["answered", "idk"]


def test_ungraded_model_rows_need_grading() -> None:
    csv = "case_id,model,diagnosis,likert\n1,m,CCF,3\n"
    with pytest.raises(FrameError, match="m/1"):
        validate_frame(read_model_csv(io.StringIO(csv)))


def test_bad_jsonl_line_and_missing_ids(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"case_id": "1", "model": "m", "output": "x"}\nnot json\n')
    with pytest.raises(FrameError, match="line 2"):
        read_model_jsonl(path)
    path.write_text('{"model": "m", "output": "x"}\n')
    with pytest.raises(FrameError, match="case_id"):
        read_model_jsonl(path)


def test_responses_csv_keeps_ids_as_text() -> None:
    frame = read_responses_csv(io.StringIO("responder,kind,case_id,likert\nr,human,007,\n"))
    assert frame.loc[0, "case_id"] == "007" and frame.loc[0, "likert"] == ""
