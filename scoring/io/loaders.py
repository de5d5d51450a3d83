"""Loaders for response files: the tidy CSV, and model outputs as JSONL or CSV.

Model-output rows carry ``case_id`` and either ``diagnosis`` + ``likert`` (or
``likert_score``) or raw text in ``output`` / ``response`` / ``text`` /
``raw`` / ``completion``, which is parsed leniently. The responder comes from
``responder`` / ``model`` / ``run`` or the ``responder`` argument. A verdict
(``correct`` or ``verdict``) is kept when present; otherwise grade first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, TextIO

import pandas as pd

from scoring.frame import TIDY_COLUMNS, FrameError
from scoring.io.model_output import ParsedAnswer, from_fields, parse_model_output
from scoring.status import is_missing_value

Source = str | Path | TextIO
RAW_TEXT_KEYS: Final = ("output", "response", "text", "raw", "completion", "raw_output")
RESPONDER_KEYS: Final = ("responder", "model", "run", "model_run", "candidate")


def read_responses_csv(source: Source) -> pd.DataFrame:
    """A responses CSV as strings (case ids stay "007"); validate with validate_frame."""
    return pd.read_csv(source, dtype=str, keep_default_na=False)


def _first(row: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if key in row and not is_missing_value(row[key]):
            return row[key]
    return None


def model_records_to_frame(
    records: Iterable[Mapping[str, Any]], *, responder: str | None = None
) -> pd.DataFrame:
    """Model-output records -> tidy rows (kind ``model``; status set by the parser)."""
    out: list[dict[str, Any]] = []
    for n, row in enumerate(records, start=1):
        case_id = _first(row, ("case_id", "case", "Master_Case_ID"))
        name = responder or _first(row, RESPONDER_KEYS)
        if case_id is None or name is None:
            raise FrameError(f"record {n}: needs a case_id and a responder (or pass responder=)")
        raw_text = _first(row, RAW_TEXT_KEYS)
        if _first(row, ("diagnosis",)) is not None or raw_text is None:
            likert = _first(row, ("likert", "likert_score"))
            parsed: ParsedAnswer = from_fields(row.get("diagnosis"), likert)
        else:
            parsed = parse_model_output(raw_text)
        out.append(
            {
                "responder": str(name),
                "kind": "model",
                "group": _first(row, ("group", "provider")),
                "case_id": str(case_id),
                "status": parsed.status,
                "diagnosis": parsed.diagnosis,
                "likert": parsed.likert if parsed.status == "answered" else None,
                "correct": _first(row, ("correct", "verdict")),
            }
        )
    return pd.DataFrame(out, columns=list(TIDY_COLUMNS))


def read_model_jsonl(source: Source, *, responder: str | None = None) -> pd.DataFrame:
    """Model outputs, one JSON object per line (blank lines skipped)."""
    text = _read_text(source)
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise FrameError(f"line {n} is not JSON: {exc.msg}") from exc
    return model_records_to_frame(records, responder=responder)


def read_model_csv(source: Source, *, responder: str | None = None) -> pd.DataFrame:
    """Model outputs as CSV, same columns as the JSONL records."""
    raw = read_responses_csv(source)
    records = [{str(k): v for k, v in r.items()} for r in raw.to_dict(orient="records")]
    return model_records_to_frame(records, responder=responder)


def _read_text(source: Source) -> str:
    if isinstance(source, str | Path):
        return Path(source).read_text(encoding="utf-8")
    return source.read()
