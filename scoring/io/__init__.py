"""Importers: pure pandas/stdlib readers that produce tidy rows for scoring."""

from scoring.io.loaders import (
    RAW_TEXT_KEYS,
    model_records_to_frame,
    read_model_csv,
    read_model_jsonl,
    read_responses_csv,
)
from scoring.io.location_output import (
    ABSENT,
    ParsedLocation,
    location_from_value,
    parse_location_output,
)
from scoring.io.model_output import (
    MAX_REPLY_CHARS,
    PARSE_FAILED,
    ParsedAnswer,
    json_objects,
    parse_model_output,
)
from scoring.io.radle import radle_to_tidy, read_radle_csv, read_roster
from scoring.io.report_output import MAX_FIELD_CHARS, ParsedReport, parse_report

__all__ = [
    "ABSENT",
    "MAX_FIELD_CHARS",
    "MAX_REPLY_CHARS",
    "PARSE_FAILED",
    "RAW_TEXT_KEYS",
    "ParsedAnswer",
    "ParsedLocation",
    "ParsedReport",
    "json_objects",
    "location_from_value",
    "model_records_to_frame",
    "parse_location_output",
    "parse_model_output",
    "parse_report",
    "radle_to_tidy",
    "read_model_csv",
    "read_model_jsonl",
    "read_radle_csv",
    "read_responses_csv",
    "read_roster",
]
