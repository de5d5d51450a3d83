"""Normalized point -> stored pixels (reader_app.runs.grounded), without a server: the
pixel-edge convention by hand, and the hit tests of scoring.regions agreeing with it."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reader_app.exam.next_case import ImageView
from reader_app.grounding.store import parse_location_json
from reader_app.runs.grounded import stored_location
from scoring.io.location_output import ABSENT, NO_FOCAL_FINDING, ParsedLocation
from scoring.regions import Box, Location, box_hit, mask_hit


def image(sha: str, width: int = 64, height: int = 48, **kw: str | None) -> ImageView:
    return ImageView(
        sha, kw.get("label") or "", kw.get("window"), kw.get("role") or "image", width, height
    )


def point(u: float, v: float, k: int | None = None) -> ParsedLocation:
    return ParsedLocation("point", u, v, k)


def test_pixel_edges_by_hand() -> None:
    spot = [image("a", 64, 48)]
    # u = 0 is the left edge of column 0, u = 1 the right edge of column 63 (x = 64)
    assert stored_location(point(0.0, 0.0), kind="spot", images=spot)[0] == json.dumps(
        {"x": 0.0, "y": 0.0, "slice": None}
    )
    assert json.loads(stored_location(point(1.0, 1.0), kind="spot", images=spot)[0] or "") == {
        "x": 64.0,
        "y": 48.0,
        "slice": None,
    }
    # the centre of column 10, row 5: u = 10.5 / 64, v = 5.5 / 48
    text, _ = stored_location(point(10.5 / 64, 5.5 / 48), kind="spot", images=spot)
    assert parse_location_json(text) == (Location(10.5, 5.5, None), False)


def test_strip_slices_count_within_their_window_in_stored_order() -> None:
    stored = [
        *(image(f"l{j}", window="lung", role="slice") for j in range(1, 4)),
        image("m-montage", window="lung", role="montage"),
        *(image(f"b{j}", window="bone", role="slice") for j in range(1, 4)),
    ]
    sent = [i for i in stored if i.role != "montage"]  # as the runner sends them
    text, _ = stored_location(point(0.5, 0.5, 5), kind="strip", images=sent)
    assert json.loads(text or "") == {"x": 32.0, "y": 24.0, "slice": 2}  # image 5 = bone 2
    backwards = list(reversed(sent))  # an imported file that sent them in another order
    text, _ = stored_location(point(0.5, 0.5, 1), kind="strip", images=backwards, stored=stored)
    assert json.loads(text or "")["slice"] == 3  # image 1 as sent = bone 3
    montage_only = [stored[3]]
    text, meta = stored_location(point(0.5, 0.5, 1), kind="strip", images=montage_only)
    assert text is None and meta["location_error"] == "a point on a montage names no slice"


def test_nothing_none_and_unusable() -> None:
    spot = [image("a")]
    assert stored_location(ABSENT, kind="spot", images=spot) == (None, {})
    assert stored_location(NO_FOCAL_FINDING, kind="spot", images=spot) == (
        '{"no_focal_finding": true}',
        {},
    )
    bad = ParsedLocation("invalid", error="location x = 240 is outside [0, 1]")
    assert stored_location(bad, kind="spot", images=spot) == (
        None,
        {"location_error": "location x = 240 is outside [0, 1]"},
    )
    unknown = [image("a", 0, 0)]
    assert stored_location(point(0.5, 0.5), kind="spot", images=unknown)[0] is None
    two_sizes = [image("a", 64, 48), image("b", 32, 32)]  # which one? not guessed
    assert stored_location(point(0.5, 0.5), kind="spot", images=two_sizes)[0] is None


@settings(deadline=1000, max_examples=100)  # ms per example, for a loaded machine
@given(
    width=st.integers(1, 2048),
    height=st.integers(1, 2048),
    data=st.data(),
)
def test_a_pixel_s_centre_hits_that_pixel_in_a_mask_and_a_box(
    width: int, height: int, data: st.DataObject
) -> None:
    col = data.draw(st.integers(0, width - 1))
    row = data.draw(st.integers(0, height - 1))
    text, _ = stored_location(
        point((col + 0.5) / width, (row + 0.5) / height),
        kind="spot",
        images=[image("a", width, height)],
    )
    location, _ = parse_location_json(text)
    assert location is not None
    mask = np.zeros((height, width), dtype=np.bool_)
    mask[row, col] = True
    assert mask_hit(location, mask)
    assert box_hit(location, (Box(col, row, 1, 1),))
    assert not box_hit(location, (Box(col + 1, row, 1, 1),))
