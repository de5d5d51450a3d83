"""The case panel's one submit value, read and checked once (exam/submission.py).

Everything the browser sends is input: wrong types and numbers that are not
finite (NaN, infinity, a 400-digit integer) are a clear AnswerError naming what
was wrong, never an OverflowError and never a NaN stored.
"""

from __future__ import annotations

import math

import pytest

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.report_submit import ReportAnswer
from reader_app.exam.submission import (
    BAD_NUMBER,
    NOT_SENT,
    PanelDraft,
    PanelValue,
    check_submission,
    clean_interaction,
    read_submission,
)
from reader_app.exam.submit import Answer, AnswerError

CASE = CaseView(
    "cpub", "spot", False, None, 0, 1, (ImageView("a" * 64, "", "lung", "image", 300, 200),)
)


def _value(**extra: object) -> dict[str, object]:
    return {"case": "cpub", "diagnosis": "Nodule", "likert": 2, "idk": False, **extra}


def test_a_good_value_becomes_one_checked_answer_with_its_location_and_record() -> None:
    sub = read_submission(
        _value(
            marker={"x": 120.456, "y": 88, "slice": None},
            record={"windows_used": ["lung"], "max_zoom": 1.8, "slices_visited": [1]},
            active_ms=4321.4,
        )
    )
    checked = check_submission(sub, CASE, report=False, grounding=True, grounding_required=True)
    assert checked.answer == Answer("Nodule", 2, False)
    assert checked.location_json == '{"x": 120.46, "y": 88.0, "slice": null}'
    assert checked.interaction is not None and checked.interaction["max_zoom"] == 1.8
    assert checked.interaction["windows_used"] == ["lung"]
    assert checked.active_ms == 4321


def test_a_report_value_is_checked_as_a_report() -> None:
    sub = read_submission(_value(findings="Clear lungs.", impression="Normal.", likert=3))
    checked = check_submission(sub, CASE, report=True, grounding=False, grounding_required=True)
    assert isinstance(checked.answer, ReportAnswer)
    assert (checked.answer.findings, checked.answer.impression) == ("Clear lungs.", "Normal.")
    assert checked.location_json is None


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"marker": {"x": 10**400, "y": 1, "slice": None}}, "marker's x"),
        ({"marker": {"x": 1, "y": math.nan, "slice": None}}, "marker's y"),
        ({"marker": {"x": math.inf, "y": 1, "slice": None}}, "marker's x"),
        ({"record": {"max_zoom": math.nan}}, "viewer record"),
        ({"record": {"fullscreen_s": 10**400}}, "viewer record"),
        ({"record": {"slices_visited": [1, 10**400]}}, "viewer record"),
        ({"active_ms": math.inf}, "active time"),
    ],
    ids=["huge-x", "nan-y", "inf-x", "nan-zoom", "huge-fullscreen", "huge-slice", "inf-active"],
)
def test_a_number_that_is_not_finite_is_a_clear_refusal(
    extra: dict[str, object], where: str
) -> None:
    with pytest.raises(AnswerError) as err:
        read_submission(_value(**extra))
    assert str(err.value) == BAD_NUMBER.format(where=where)


@pytest.mark.parametrize(
    "raw",
    [None, "text", [1], {"diagnosis": "no case"}, _value(marker=[1, 2]), _value(record="x")],
    ids=["none", "text", "list", "no-case", "marker-list", "record-text"],
)
def test_a_value_not_shaped_as_the_panel_sends_it_is_refused(raw: object) -> None:
    with pytest.raises(AnswerError, match="did not arrive"):
        read_submission(raw)
    assert NOT_SENT


def test_a_likert_that_is_no_whole_number_is_refused_for_the_confidence_field() -> None:
    for bad in ("3", True, 2.5):
        with pytest.raises(AnswerError) as err:
            read_submission(_value(likert=bad))
        assert err.value.field == "likert"


def test_idk_carries_no_location_even_with_a_marker_on_screen() -> None:
    sub = read_submission(_value(idk=True, marker={"x": 1, "y": 1, "slice": None}))
    checked = check_submission(sub, CASE, report=False, grounding=True, grounding_required=True)
    assert checked.answer == Answer(None, None, True) and checked.location_json is None


def test_clean_interaction_keeps_known_fields_of_the_right_type() -> None:
    raw = {
        "case": "c1",
        "slices_visited": [3, 1, 3, "x", -2, 2.0],
        "windows_used": ["lung", 7, "bone"],
        "zoom_used": True,
        "pan_used": "yes",  # not a boolean: treated as not used
        "max_zoom": 2.456,
        "thumbnail_clicks": 2,
        "fullscreen_s": -4,
        "extra": "dropped",
    }
    assert clean_interaction(raw) == {
        "slices_visited": [1, 2, 3],
        "windows_used": ["lung", "bone"],
        "zoom_used": True,
        "pan_used": False,
        "one_to_one_used": False,
        "max_zoom": 2.46,
        "thumbnail_clicks": 2,
        "fullscreen_s": 0.0,
        # no window/level in the record: the image as stored
        "wl_used": False,
        "wl_width": 255.0,
        "wl_center": 127.5,
        # issue 42: no HU window, no negative, no distance measured
        "wl_hu": None,
        "invert_used": False,
        "inverted": False,
        "measurements": [],
        "original_values": False,
    }


def test_clean_interaction_holds_window_level_to_its_range() -> None:
    got = clean_interaction({"wl_used": True, "wl_width": 80.5, "wl_center": 60})
    assert (got["wl_used"], got["wl_width"], got["wl_center"]) == (True, 80.5, 60.0)
    wild = clean_interaction({"wl_used": 1, "wl_width": 0, "wl_center": 10**6})
    # 1 is not True; width at least 1 grey level; the centre at most 383 (viewer.js)
    assert (wild["wl_used"], wild["wl_width"], wild["wl_center"]) == (False, 1.0, 383.0)
    low = clean_interaction({"wl_width": 9e8, "wl_center": -9e8, "wl_used": "yes"})
    assert (low["wl_width"], low["wl_center"], low["wl_used"]) == (510.0, -128.0, False)
    for bad in (float("nan"), float("inf"), 10**400):
        with pytest.raises(AnswerError):
            clean_interaction({"wl_width": bad})


def test_clean_interaction_keeps_hu_invert_and_measurements_held_to_range() -> None:
    got = clean_interaction(
        {
            "wl_hu": {"width": 412.35, "center": -49.5, "extra": 1},
            "invert_used": True,
            "inverted": "yes",  # not a boolean: not inverted
            "measurements": [
                {"slice": 3, "x1": 10, "y1": 20, "x2": 50, "y2": 50, "px": 50, "mm": 36.88},
                {"slice": None, "x1": 1, "y1": 1, "x2": 2, "y2": 2, "px": 1.41, "mm": None},
                "not a measurement",
                {"slice": 2, "x1": -5, "y1": 0, "x2": 9e7, "y2": 0, "px": 1, "mm": 1, "z": 7},
            ]
            * 20,
        }
    )
    assert got["wl_hu"] == {"width": 412.35, "center": -49.5}
    assert (got["invert_used"], got["inverted"]) == (True, False)
    first, second, wild = got["measurements"][:3]
    assert first == {"slice": 3, "x1": 10, "y1": 20, "x2": 50, "y2": 50, "px": 50, "mm": 36.88}
    assert second["slice"] is None and second["mm"] is None
    assert wild == {"slice": 2, "x1": 0.0, "y1": 0, "x2": 100_000.0, "y2": 0, "px": 1, "mm": 1}
    # at most MAX_MEASUREMENTS items are read (the strings among them are skipped)
    assert len(got["measurements"]) == 3 * 50 // 4 + 1
    assert clean_interaction({"wl_hu": [1, 2]})["wl_hu"] is None
    with pytest.raises(AnswerError):
        clean_interaction({"measurements": [{"mm": float("nan")}]})


@pytest.mark.parametrize(
    "extra",
    [{"reader_id": 1}, {"arm": "aided"}, {"marker": {"x": 1, "y": 1, "z": 0}}, {"idk": "yes"}],
    ids=["reader-id", "unknown-field", "marker-field", "idk-text"],
)
def test_a_field_the_panel_never_sends_or_a_loose_type_is_refused(
    extra: dict[str, object],
) -> None:
    # the shape is declared once (PanelValue): unknown fields and loose types are not
    # the panel's value, whether at the top or in the marker
    with pytest.raises(AnswerError, match="did not arrive") as err:
        read_submission(_value(**extra))
    assert err.value.field is None


def test_the_declared_shape_is_every_key_the_panel_sends() -> None:
    # panel.js's submit value: case, form_key, values() (likert, idk, diagnosis, findings,
    # impression, no_focal_finding), marker, record, active_ms; its draft adds edited_at
    sent = {"case", "form_key", "likert", "idk", "diagnosis", "findings", "impression"}
    sent |= {"no_focal_finding", "marker", "record", "active_ms"}
    assert set(PanelValue.model_fields) == sent
    assert set(PanelDraft.model_fields) == sent | {"edited_at"}
    full = dict.fromkeys(sent) | {"case": "cpub", "idk": False, "no_focal_finding": False}
    assert read_submission(full).case_token == "cpub"
