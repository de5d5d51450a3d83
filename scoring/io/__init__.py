"""Importers: pure pandas/stdlib readers that produce tidy rows for scoring."""

from scoring.io.loaders import (
    model_records_to_frame,
    read_model_csv,
    read_model_jsonl,
    read_responses_csv,
)
from scoring.io.model_output import PARSE_FAILED, ParsedAnswer, parse_model_output
from scoring.io.radle import radle_to_tidy, read_radle_csv

__all__ = [
    "PARSE_FAILED",
    "ParsedAnswer",
    "model_records_to_frame",
    "parse_model_output",
    "radle_to_tidy",
    "read_model_csv",
    "read_model_jsonl",
    "read_radle_csv",
    "read_responses_csv",
]
