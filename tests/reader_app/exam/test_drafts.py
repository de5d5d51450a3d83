"""Drafts kept by the server (exam/drafts.py) on SQLite and PostgreSQL.

One row per (reader, case), replaced on every save; deleted in the transaction
that stores the answer (a failed store keeps it); refused for a case outside the
reader's exam or already answered; its texts cut to the form's limits and its
numbers finite, checked by the submit's own reader (exam/submission.py).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, func, select

from reader_app.core.settings import Settings
from reader_app.exam.drafts import DraftRefused, DraftValues, load_draft, save_draft
from reader_app.exam.order import ensure_order
from reader_app.exam.report_submit import MAX_REPORT_CHARS
from reader_app.exam.submission import read_draft
from reader_app.exam.submit import (
    MAX_DIAGNOSIS_CHARS,
    AnswerColumns,
    AnswerError,
    store_response,
    submit_answer,
    validate_answer,
)
from reader_app.models import Case, ExamDraft, Reader, ReaderOrder
from tests.factories import make_reader, make_study


def _cases(session: Session, reader: Reader) -> list[str]:
    ensure_order(session=session, reader=reader)
    rows = session.exec(
        select(Case.public_id)
        .join(ReaderOrder, ReaderOrder.case_id == Case.id)  # type: ignore[arg-type]
        .where(ReaderOrder.reader_id == reader.id)
        .order_by(ReaderOrder.slot)  # type: ignore[arg-type]
    ).all()
    return list(rows)


def _value(case: str, **extra: object) -> dict[str, object]:
    return {
        "case": case,
        "form_key": "exam",
        "diagnosis": "Pneumothorax",
        "likert": 3,
        "idk": False,
        "no_focal_finding": False,
        "marker": {"x": 120.5, "y": 40, "slice": None},
        "record": {"windows_used": ["lung", "bone"], "zoom_used": True, "max_zoom": 1.8},
        "active_ms": 4200,
        "edited_at": 1_764_648_000_123,
        **extra,
    }


def _rows(session: Session) -> int:
    return int(session.exec(select(func.count()).select_from(ExamDraft)).one())


def test_a_draft_is_saved_replaced_and_loaded_as_one_row(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study).reader
    first, second = _cases(session, reader)
    save_draft(session=session, reader=reader, values=read_draft(_value(first)))
    save_draft(
        session=session,
        reader=reader,
        values=read_draft(_value(first, diagnosis="Tension pneumothorax", likert=4, marker=None)),
    )
    assert _rows(session) == 1
    got = load_draft(session=session, reader_id=reader.id, case_public_id=first)  # type: ignore[arg-type]
    assert got is not None
    assert (got.diagnosis, got.likert, got.marker) == ("Tension pneumothorax", 4, None)
    # the viewer record as clean_interaction reduces it: every known field, unknown ones out
    assert got.record == {
        "slices_visited": [],
        "windows_used": ["lung", "bone"],
        "zoom_used": True,
        "pan_used": False,
        "one_to_one_used": False,
        "max_zoom": 1.8,
        "thumbnail_clicks": 0,
        "fullscreen_s": 0.0,
        # window/level by drag (the reading room): not used, so the stored image's own
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
    assert (got.active_ms, got.edited_at_ms) == (4200, 1_764_648_000_123)
    assert got.updated_at is not None and got.updated_at.tzinfo is not None
    assert load_draft(session=session, reader_id=reader.id, case_public_id=second) is None  # type: ignore[arg-type]


def test_a_value_edited_before_the_kept_draft_leaves_it_as_it_is(
    session: Session, settings: Settings
) -> None:
    """A tab reconnecting after a server restart re-sends its last report; another
    workstation's later edit stays. The same edit time with a new active time is saved."""
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    (case,) = _cases(session, reader)
    save_draft(session=session, reader=reader, values=read_draft(_value(case, edited_at=2000)))
    stale = _value(case, diagnosis="older", edited_at=1999)
    save_draft(session=session, reader=reader, values=read_draft(stale))
    later = _value(case, active_ms=9000, edited_at=2000)
    save_draft(session=session, reader=reader, values=read_draft(later))
    got = load_draft(session=session, reader_id=reader.id, case_public_id=case)  # type: ignore[arg-type]
    assert got is not None
    assert (got.diagnosis, got.active_ms, got.edited_at_ms) == ("Pneumothorax", 9000, 2000)


def test_the_marker_is_kept_as_its_point_and_a_report_keeps_both_texts(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    (case,) = _cases(session, reader)
    raw = _value(case, diagnosis=None, findings="Left apex: no lung markings.")
    raw |= {"impression": "Pneumothorax.", "marker": {"x": 3, "y": 4.25, "slice": 7, "z": "x"}}
    # a field the panel never sends (the marker's "z") is not the panel's value: refused
    with pytest.raises(AnswerError, match="did not arrive"):
        read_draft(raw)
    raw["marker"] = {"x": 3, "y": 4.25, "slice": 7}
    save_draft(session=session, reader=reader, values=read_draft(raw))
    got = load_draft(session=session, reader_id=reader.id, case_public_id=case)  # type: ignore[arg-type]
    assert got is not None
    assert got.marker == {"x": 3.0, "y": 4.25, "slice": 7}
    assert (got.diagnosis, got.findings, got.impression) == (
        None,
        "Left apex: no lung markings.",
        "Pneumothorax.",
    )


def test_storing_the_answer_deletes_the_draft_in_the_same_transaction(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study).reader
    first, second = _cases(session, reader)
    for case in (first, second):
        save_draft(session=session, reader=reader, values=read_draft(_value(case)))

    # a store that fails at its commit (a row the schema refuses: "I don't know" with a
    # diagnosis) rolls the draft's deletion back with it: the draft is still there
    bad = AnswerColumns(status="idk", likert=None, idk=True, diagnosis="not allowed")
    with pytest.raises(IntegrityError):
        store_response(
            session=session,
            reader=reader,
            case_public_id=first,
            columns=bad,
            shown_at=None,
            image_sha256=[],
        )
    assert _rows(session) == 2

    submit_answer(
        session=session,
        reader=reader,
        case_public_id=first,
        answer=validate_answer("Pneumothorax", 3, False),
        shown_at=None,
        image_sha256=[],
    )
    session.expire_all()
    assert load_draft(session=session, reader_id=reader.id, case_public_id=first) is None  # type: ignore[arg-type]
    assert _rows(session) == 1  # the other case's draft is untouched
    assert load_draft(session=session, reader_id=reader.id, case_public_id=second) is not None  # type: ignore[arg-type]

    # a draft never brings the stored case back: refused, and nothing is stored
    with pytest.raises(DraftRefused, match="answered"):
        save_draft(session=session, reader=reader, values=read_draft(_value(first)))
    assert _rows(session) == 1


def test_a_stray_draft_of_an_answered_case_is_never_loaded(
    session: Session, settings: Settings
) -> None:
    """A second tab's save in the instant of the store can leave a row: never shown, and
    gone at the next store attempt of that case (the duplicate path)."""
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    (case,) = _cases(session, reader)
    kwargs = {"session": session, "reader": reader, "case_public_id": case}
    submit_answer(answer=validate_answer("A", 1, False), shown_at=None, image_sha256=[], **kwargs)  # type: ignore[arg-type]
    case_id = session.exec(select(Case.id).where(Case.public_id == case)).one()
    session.add(ExamDraft(reader_id=reader.id, case_id=case_id, diagnosis="stray"))  # type: ignore[arg-type]
    session.commit()
    assert load_draft(session=session, reader_id=reader.id, case_public_id=case) is None  # type: ignore[arg-type]
    again = submit_answer(
        answer=validate_answer("B", 2, False),
        shown_at=None,
        image_sha256=[],
        **kwargs,  # type: ignore[arg-type]
    )
    assert again.duplicate
    assert _rows(session) == 0


def test_a_draft_for_a_case_outside_the_readers_exam_is_refused(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, slug="a")
    other = make_study(session, settings.asset_dir, n_cases=1, slug="b")
    reader = make_reader(session, study).reader
    stranger = make_reader(session, other, code="R02").reader
    (theirs,) = _cases(session, stranger)
    _cases(session, reader)
    for case in (theirs, "no-such-case"):
        with pytest.raises(DraftRefused, match="not part of your exam"):
            save_draft(session=session, reader=reader, values=read_draft(_value(case)))
    assert _rows(session) == 0
    # the reader id comes from the caller (the signed-in session), never from the value:
    # a value naming one is not the panel's value and is refused
    with pytest.raises(AnswerError, match="did not arrive"):
        read_draft(_value(theirs, reader_id=reader.id))
    assert _rows(session) == 0
    save_draft(session=session, reader=stranger, values=read_draft(_value(theirs)))
    row = session.exec(select(ExamDraft)).one()
    assert row.reader_id == stranger.id


def test_texts_are_cut_to_the_forms_limits_and_cleared_of_forbidden_characters() -> None:
    long = read_draft(_value("c", diagnosis="x" * 5000, findings="f" * 20_000))
    assert long.diagnosis == "x" * MAX_DIAGNOSIS_CHARS
    assert long.findings == "f" * MAX_REPORT_CHARS
    assert read_draft(_value("c", diagnosis="Pneumo\x00thorax\x07")).diagnosis == "Pneumothorax"
    with pytest.raises(AnswerError):  # past anything the panel sends: not the panel's value
        read_draft(_value("c", impression="i" * 20_001))
    assert read_draft(_value("c", likert=9)).likert is None


@pytest.mark.parametrize(
    "bad",
    [
        {"marker": {"x": math.nan, "y": 1}},
        {"marker": {"x": 1, "y": 1, "slice": math.inf}},
        {"record": {"max_zoom": math.inf}},
        {"record": {"slices_visited": [10**400]}},
        {"active_ms": math.nan},
        {"edited_at": 10**20},
        {"edited_at": "yesterday"},
        {"likert": "3"},
        {"case": 7},
    ],
)
def test_numbers_that_are_not_finite_or_not_numbers_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(AnswerError):
        read_draft({**_value("c"), **bad})


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
KEYS = st.sampled_from(
    ["case", "diagnosis", "likert", "idk", "marker", "record", "active_ms", "edited_at"]
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, JSON))
def test_any_value_is_a_bounded_draft_or_an_answer_error(raw: dict[str, object]) -> None:
    """Whatever arrives, read_draft gives a draft that is safe to store (JSON of finite
    numbers, texts within the limits) or says why not: never another exception."""
    try:
        got = read_draft(raw)
    except AnswerError:
        return
    assert isinstance(got, DraftValues)
    assert got.diagnosis is None or len(got.diagnosis) <= MAX_DIAGNOSIS_CHARS
    assert got.likert is None or 0 <= got.likert <= 4
    json.dumps([got.marker, got.record], allow_nan=False)  # raises on NaN or infinity
