"""The strict, bounded report parser: {"findings", "impression"} or a failure."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.io.report_output import MAX_FIELD_CHARS, MAX_INPUT_CHARS, parse_report


def test_strict_json_in_the_accepted_shapes() -> None:
    body = {"findings": "RUL nodule 18 mm.", "impression": "Lung cancer."}
    for text in (
        json.dumps(body),
        f"```json\n{json.dumps(body, indent=2)}\n```",
        f"Here is the report:\n{json.dumps(body)}\nThank you.",
    ):
        got = parse_report(text)
        assert (got.findings, got.impression, got.status) == (
            "RUL nodule 18 mm.",
            "Lung cancer.",
            "answered",
        )
    listed = parse_report(json.dumps({"findings": ["a", "b"], "impression": "c"}))
    assert (listed.findings, listed.impression) == ("a\nb", "c")
    only = parse_report(json.dumps({"impression": "Normal CT."}))
    assert (only.findings, only.impression, only.status) == (None, "Normal CT.", "answered")


def test_anything_else_is_a_failure_with_a_reason() -> None:
    for text in (
        None,
        "",
        "Findings: nodule. Impression: cancer.",  # prose is not the contract
        '{"diagnosis": "cancer", "likert_score": 3}',
        '{"findings": 3, "impression": "x"}',
        '{"findings": "", "impression": "  "}',
        "[1, 2]",
    ):
        got = parse_report(text)
        assert got.status == "failure" and got.findings is None and got.impression is None
        assert got.error


def test_bounded() -> None:
    huge = json.dumps({"findings": "x" * (MAX_FIELD_CHARS * 3), "impression": "y"})
    got = parse_report(huge)
    assert got.findings is not None and len(got.findings) == MAX_FIELD_CHARS
    # a reply past the input bound is cut before parsing: its JSON no longer closes
    assert parse_report(" " * MAX_INPUT_CHARS + json.dumps({"impression": "x"})).status == "failure"
    assert parse_report("{" * 5000 + "}" * 5000).status == "failure"


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=300))
def test_total_never_raises(text: str) -> None:
    got = parse_report(text)
    assert got.status in ("answered", "failure")
    assert (got.status == "failure") == (got.error is not None)
