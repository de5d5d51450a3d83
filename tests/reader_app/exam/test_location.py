"""The location step's server-side check (exam/location.py), and what it stores.

The browser's marker is input: only a finite point on the stored image (and, on
a strip, on one of its slices) is stored; anything else is a form error and
nothing is stored. Stored and revised on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.exam.location import BOTH, MISSING, OFF_IMAGE, location_answer
from reader_app.exam.next_case import CaseView, ImageView, next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.revisions import answer_history, revise_answer, stored_answer
from reader_app.exam.submit import AnswerError, submit_answer, validate_answer
from reader_app.grounding.store import parse_location_json
from reader_app.models import Response
from reader_app.study.config import study_settings
from scoring.regions import Location
from tests.factories import make_reader, make_study


def _case(kind: str = "spot", *, width: int = 300, height: int = 200, slices: int = 1) -> CaseView:
    """A case of one window (``lung``) and one (spot) or ``slices`` (strip) images."""
    images = tuple(
        ImageView(f"{j:064x}", f"{j + 1}/{slices}", "lung", "slice", width, height)
        for j in range(slices)
    )
    # a second window with the same geometry: the marker does not depend on the window
    images += tuple(
        ImageView(f"{j + 100:064x}", f"{j + 1}/{slices}", "bone", "slice", width, height)
        for j in range(slices)
    )
    return CaseView("cpub", kind, False, None, 0, 1, images)


def _sent(case: str = "cpub", **point: object) -> dict[str, object]:
    """The marker as the case panel sends it (exam/submission.py)."""
    return {"case": case, **point}


def test_a_point_on_the_spot_image_is_stored_in_stored_pixels() -> None:
    text = location_answer(
        _sent(x=120.456, y=88, slice=None), case=_case(), no_focal_finding=False, required=True
    )
    assert json.loads(text or "") == {"x": 120.46, "y": 88.0, "slice": None}
    assert parse_location_json(text) == (Location(120.46, 88.0, None), False)


def test_the_image_edges_are_on_the_image_and_one_step_past_is_not() -> None:
    case = _case(width=300, height=200)
    for x, y in [(0, 0), (300, 200), (0, 200), (300, 0)]:
        assert location_answer(_sent(x=x, y=y), case=case, no_focal_finding=False, required=True)
    for x, y in [(-0.01, 5), (5, -0.01), (300.01, 5), (5, 200.01)]:
        with pytest.raises(AnswerError) as err:
            location_answer(_sent(x=x, y=y), case=case, no_focal_finding=False, required=True)
        assert str(err.value) == OFF_IMAGE and err.value.field == "location"


@pytest.mark.parametrize(
    "x",
    [math.nan, math.inf, -math.inf, "12", None, True, [1], 10**400],
    ids=["nan", "inf", "-inf", "text", "null", "bool", "list", "400-digits"],
)
def test_a_value_that_is_not_a_finite_number_is_a_form_error(x: object) -> None:
    sent = {"case": "cpub", "x": x, "y": 10}  # NaN/Infinity as JS never sends
    with pytest.raises(AnswerError, match="not on the image"):
        location_answer(sent, case=_case(), no_focal_finding=False, required=False)


def test_a_strip_point_needs_one_of_its_slices() -> None:
    case = _case("strip", width=64, height=48, slices=16)
    text = location_answer(
        _sent(x=10.5, y=40, slice=16), case=case, no_focal_finding=False, required=True
    )
    assert parse_location_json(text) == (Location(10.5, 40.0, 16), False)
    for bad in [0, 17, None, 2.5, "3", True]:
        with pytest.raises(AnswerError, match="not on the image"):
            location_answer(
                _sent(x=10, y=10, slice=bad), case=case, no_focal_finding=False, required=True
            )
    # the slice's own size bounds the point (48 rows)
    with pytest.raises(AnswerError):
        location_answer(
            _sent(x=10, y=48.5, slice=3), case=case, no_focal_finding=False, required=True
        )


def test_a_spot_point_carries_no_slice() -> None:
    with pytest.raises(AnswerError):
        location_answer(
            _sent(x=1, y=1, slice=1), case=_case(), no_focal_finding=False, required=True
        )


def test_nothing_given_is_an_error_only_when_the_study_requires_a_location() -> None:
    for sent in [None, "", "not json", [1, 2], _sent(case="another-case", x=1, y=1)]:
        with pytest.raises(AnswerError) as err:
            location_answer(sent, case=_case(), no_focal_finding=False, required=True)
        assert str(err.value) == MISSING and err.value.field == "location"
        assert location_answer(sent, case=_case(), no_focal_finding=False, required=False) is None


def test_no_focal_finding_alone_is_stored_and_with_a_marker_is_refused() -> None:
    # issue 38: a marker was dropped silently when both came; the screen never shows
    # both, and a value that carries both changes nothing and says why
    for sent in [None, "", _sent(case="another-case", x=5, y=5)]:  # no marker of this case
        text = location_answer(sent, case=_case(), no_focal_finding=True, required=True)
        assert parse_location_json(text) == (None, True)
    for sent in [_sent(x=5, y=5), _sent(x=-5, y=5)]:
        with pytest.raises(AnswerError) as err:
            location_answer(sent, case=_case(), no_focal_finding=True, required=True)
        assert str(err.value) == BOTH and err.value.field == "location"


@given(
    x=st.floats(min_value=-1000, max_value=1000, allow_nan=False),
    y=st.floats(min_value=-1000, max_value=1000, allow_nan=False),
)
def test_a_point_is_accepted_exactly_when_it_is_on_the_image(x: float, y: float) -> None:
    case = _case(width=300, height=200)
    on_image = 0 <= x <= 300 and 0 <= y <= 200
    try:
        text = location_answer(_sent(x=x, y=y), case=case, no_focal_finding=False, required=True)
    except AnswerError:
        assert not on_image
    else:
        assert on_image
        point, nff = parse_location_json(text)
        assert point is not None and not nff
        assert abs(point.x - x) <= 0.005 and abs(point.y - y) <= 0.005  # kept to 0.01 px


def test_the_location_is_stored_with_the_answer_and_revisions_keep_the_earlier_one(
    session: Session, settings: Settings
) -> None:
    study = make_study(
        session,
        settings.asset_dir,
        n_cases=2,
        strip_every=2,
        config={"grounding": True, "allow_revisions": True},
    )
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    config = study_settings(study)
    assert config.grounding and config.grounding_required
    answered: dict[str, str | None] = {}
    for _ in range(2):
        case = next_case(session=session, reader=reader)
        assert case is not None
        strip = case.kind == "strip"
        sent = _sent(case.public_id, x=63.5, y=0.25, slice=4 if strip else None)
        location = location_answer(sent, case=case, no_focal_finding=False, required=True)
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=validate_answer("Nodule", 3, False),
            shown_at=None,
            image_sha256=case.reader_sha256,
            location_json=location,
        )
        answered[case.kind] = case.public_id
    rows = {r.case_id: r for r in session.exec(select(Response)).all()}
    points = sorted(
        (parse_location_json(r.location_json)[0] for r in rows.values()),
        key=lambda p: p.slice or 0 if p else 0,
    )
    assert points == [Location(63.5, 0.25, None), Location(63.5, 0.25, 4)]

    spot = answered["spot"]
    assert spot is not None
    first = stored_answer(session=session, reader=reader, case_public_id=spot)
    assert first is not None and parse_location_json(first.location_json)[0] == Location(63.5, 0.25)
    changed = revise_answer(
        session=session,
        reader=reader,
        config=config,
        case_public_id=spot,
        answer=validate_answer("Nodule", 3, False),  # only the location changes
        seen_revision=0,
        location_json='{"no_focal_finding": true}',
    )
    assert changed.revision == 1
    assert parse_location_json(changed.location_json) == (None, True)
    (earlier,) = answer_history(session=session, response_id=changed.response_id)
    assert parse_location_json(earlier.location_json) == (Location(63.5, 0.25), False)
