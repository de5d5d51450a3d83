"""The grounded prompt's ``location``: read leniently where it is unambiguous, boundedly
always, and never invented (out of range, malformed or hostile = no location)."""

from __future__ import annotations

import json
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.io.location_output import (
    ABSENT,
    KINDS,
    NO_FOCAL_FINDING,
    OVERSHOOT,
    ParsedLocation,
    location_from_value,
    parse_location_output,
)
from scoring.io.model_output import MAX_REPLY_CHARS, parse_model_output

BUDGET_S = 1.0  # generous for a loaded 2-core machine


def reply(location: object) -> str:
    return json.dumps({"diagnosis": "Pneumothorax", "likert_score": 3, "location": location})


def test_a_point_in_the_prompt_s_shape() -> None:
    text = reply({"slice": 3, "x": 0.25, "y": 0.5})
    assert parse_location_output(text, n_images=4) == ParsedLocation("point", 0.25, 0.5, 3)
    assert parse_model_output(text).status == "answered"  # the diagnosis reader is unaffected


def test_shapes_models_write() -> None:
    fenced = "Here:\n```json\n" + reply({"x": 0.1, "y": 0.9, "slice": None}) + "\n```"
    assert parse_location_output(fenced) == ParsedLocation("point", 0.1, 0.9, None)
    python = "{'diagnosis': 'Abscess', 'likert': 2, 'location': {'Slice': '2', 'X': '0.5', 'Y': 1}}"
    assert parse_location_output(python, n_images=2) == ParsedLocation("point", 0.5, 1.0, 2)
    image_key = reply({"image": 2.0, "x": 0, "y": 0})
    assert parse_location_output(image_key, n_images=2) == ParsedLocation("point", 0.0, 0.0, 2)


@pytest.mark.parametrize(
    "location", [None, "no focal finding", "No focal finding.", "none", {"no_focal_finding": True}]
)
def test_no_focal_finding(location: object) -> None:
    assert parse_location_output(reply(location)) == NO_FOCAL_FINDING


def test_no_location_key_is_absent_not_no_finding() -> None:
    assert parse_location_output('{"diagnosis": "Abscess", "likert": 2}') == ABSENT
    assert parse_location_output("Diagnosis: Abscess\nLikert: 2") == ABSENT
    assert parse_location_output("I don't know") == ABSENT


def test_tiny_overshoot_is_clamped_and_said_so() -> None:
    # 1 + OVERSHOOT is the last value clamped; a hair further is out of range
    parsed = parse_location_output(reply({"x": 1 + OVERSHOOT, "y": -OVERSHOOT / 2}))
    assert (parsed.kind, parsed.x, parsed.y, parsed.clamped) == ("point", 1.0, 0.0, True)
    assert parse_location_output(reply({"x": 1.02, "y": 0.5})).kind == "invalid"


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ({"x": 240, "y": 180, "slice": 1}, "location x = 240 is outside [0, 1]"),  # pixels
        ({"x": 0.5, "y": -0.2}, "location y = -0.2 is outside [0, 1]"),
        ({"x": 0.5}, "location has no y"),
        ({"x": True, "y": 0.5}, "location x is not a finite number"),
        ({"x": "half", "y": 0.5}, "location x is not a finite number"),
        ({"x": [0.5], "y": 0.5}, "location x is not a finite number"),
        ({"x": 0.5, "y": 0.5, "slice": 0}, "location slice is not a whole number >= 1"),
        ({"x": 0.5, "y": 0.5, "slice": 2.5}, "location slice is not a whole number >= 1"),
        ({"x": 0.5, "y": 0.5, "slice": "two"}, "location slice is not a whole number >= 1"),
        ({"x": 0.5, "y": 0.5, "slice": 5}, "location slice 5 is past the 4 image(s) sent"),
        ([0.5, 0.5], "location is not an object with slice, x and y"),
        ("upper left lobe", "location is text, not an object with slice, x and y"),
    ],
)
def test_unusable_locations_are_invalid_with_a_reason(location: object, error: str) -> None:
    parsed = parse_location_output(reply(location), n_images=4)
    assert parsed == ParsedLocation("invalid", error=error)


def test_non_finite_numbers_are_invalid() -> None:
    for token in ("NaN", "Infinity", "-Infinity", "1e999"):
        text = '{"diagnosis": "A", "location": {"x": ' + token + ', "y": 0.5}}'
        assert parse_location_output(text) == ParsedLocation(
            "invalid", error="location x is not a finite number"
        )
    assert location_from_value({"x": math.inf, "y": 0.5}).kind == "invalid"


def test_hostile_numbers_are_bounded() -> None:
    digits = "9" * 5000
    huge_x = '{"location": {"x": ' + digits + ', "y": 0.5}}'
    assert parse_location_output(huge_x).kind == "invalid"  # not a 5000-digit int
    huge_string = '{"location": {"x": "0.' + "5" * 5000 + '", "y": 0.5}}'
    assert parse_location_output(huge_string).kind == "invalid"  # not converted at all
    huge_slice = '{"location": {"x": 0.5, "y": 0.5, "slice": "' + digits + '"}}'
    assert parse_location_output(huge_slice).kind == "invalid"


@pytest.mark.parametrize(
    "text",
    [
        "{" * 2048 + "}" * 2048,
        '{"location":' * 20_000 + "1" + "}" * 20_000,
        '{"location": {"x": 0.5, "y": 0.5}}' + "{" * (MAX_REPLY_CHARS // 2),
        '{"location": ' + "[" * 30_000 + "]" * 30_000 + "}",
        "{'location" * (MAX_REPLY_CHARS // 12),
    ],
    ids=["braces", "deep-location", "stray-braces", "deep-list", "open-quotes"],
)
def test_hostile_replies_stay_within_budget(text: str) -> None:
    started = time.perf_counter()
    parsed = parse_location_output(text[:MAX_REPLY_CHARS], n_images=16)
    assert parsed.kind in KINDS
    assert time.perf_counter() - started < BUDGET_S


def test_reply_over_the_cap_is_not_read() -> None:
    text = reply({"x": 0.5, "y": 0.5})
    assert parse_location_output(text + " " * (MAX_REPLY_CHARS - len(text))).kind == "point"
    assert parse_location_output(text + " " * (MAX_REPLY_CHARS + 1)) == ABSENT


def test_non_strings_are_absent() -> None:
    for value in (None, 3, b'{"location": null}', ["x"], "", "  "):
        assert parse_location_output(value) == ABSENT


@settings(deadline=1000, max_examples=150)
@given(
    st.lists(
        st.sampled_from(
            [*"{}[]\"':,.-` \n\\", "location", "slice", "x", "y", "null", "0.5", "1", "7", "1e9"]
        ),
        max_size=1500,
    ).map("".join)
)
def test_any_soup_is_total(text: str) -> None:
    parsed = parse_location_output(text, n_images=4)
    assert parsed.kind in KINDS
    if parsed.kind == "point":  # a point is never out of range, whatever came in
        assert parsed.x is not None and 0.0 <= parsed.x <= 1.0
        assert parsed.y is not None and 0.0 <= parsed.y <= 1.0
        assert parsed.slice is None or 1 <= parsed.slice <= 4


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=1000, max_examples=300)
@given(
    x=json_values | st.floats(min_value=-0.1, max_value=1.1),
    y=json_values | st.floats(min_value=-0.1, max_value=1.1),
    slice_no=json_values,
)
def test_any_location_value_is_total_and_a_point_is_in_range(
    x: object, y: object, slice_no: object
) -> None:
    parsed = location_from_value({"x": x, "y": y, "slice": slice_no}, n_images=3)
    assert parsed.kind in ("point", "invalid")
    if parsed.kind == "point":
        assert parsed.x is not None and parsed.y is not None
        assert 0.0 <= parsed.x <= 1.0 and 0.0 <= parsed.y <= 1.0
        assert parsed.slice is None or 1 <= parsed.slice <= 3
        for given_value, got in ((x, parsed.x), (y, parsed.y)):
            if isinstance(given_value, float) and 0.0 <= given_value <= 1.0:
                assert got == given_value  # a value in range is kept exactly
    else:
        assert parsed.error
