"""The stored forms of a location and a reference mask read back as written."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reader_app.grounding.store import decode_mask, encode_mask, location_json, parse_location_json
from scoring.regions import Location, RegionError


@given(
    x=st.floats(0, 4096, allow_nan=False),
    y=st.floats(0, 4096, allow_nan=False),
    slice_no=st.none() | st.integers(1, 64),
)
def test_a_point_reads_back_within_a_hundredth_of_a_pixel(
    x: float, y: float, slice_no: int | None
) -> None:
    point, none = parse_location_json(location_json(Location(x=x, y=y, slice=slice_no)))
    assert none is False and point is not None
    assert abs(point.x - x) <= 0.005 and abs(point.y - y) <= 0.005
    assert point.slice == slice_no


def test_no_focal_finding_and_nothing_are_told_apart() -> None:
    assert parse_location_json(location_json(None, no_focal_finding=True)) == (None, True)
    assert location_json(None) is None
    assert parse_location_json(None) == (None, False)


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[1, 2]", '{"x": "1", "y": 2}', '{"x": true, "y": 2}',
     '{"x": 1, "y": 2, "slice": 1.5}', json.dumps({"x": 1e999, "y": 1})],
)  # fmt: skip
def test_a_malformed_column_is_no_location(text: str) -> None:
    assert parse_location_json(text) == (None, False)


@pytest.mark.parametrize(
    "point", [Location(x=-1, y=0), Location(x=0, y=float("nan")), Location(x=1, y=1, slice=0)]
)
def test_an_impossible_point_is_refused(point: Location) -> None:
    with pytest.raises(RegionError):
        location_json(point)


def test_a_mask_round_trips_and_stays_small() -> None:
    mask = np.zeros((16, 512, 512), dtype=bool)
    mask[3, 100:140, 200:260] = True
    data = encode_mask(mask)
    assert len(data) < 20_000
    back = decode_mask(data)
    assert back.dtype == np.bool_ and back.shape == mask.shape and (back == mask).all()


def test_a_mask_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(RegionError, match="2 or 3 dimensions"):
        encode_mask(np.zeros(4, dtype=bool))
