"""One submitted answer, as the case panel sent it, checked once.

The case panel (``ui/static/panel.js``) sends ONE value per submit, built from
what is on screen at that moment::

    {"case": "<public id>", "form_key": "...", "diagnosis": "...", "findings": "...",
     "impression": "...", "likert": 0-4 | null, "idk": bool, "no_focal_finding": bool,
     "marker": {"x", "y", "slice"} | null, "record": {...viewer record...},
     "active_ms": int}

Everything in it is input. :func:`read_submission` turns it into a typed
:class:`Submission` (wrong types are a clear :class:`AnswerError`, never an
exception from deep inside); :func:`check_submission` applies the exam's rules
(the diagnosis or report rules, the confidence rule, the location on the image)
and returns what one store call needs. Numbers must be finite and of a sane
size: a NaN or a 400-digit integer in the marker or the viewer record is
refused with a message, never stored and never an ``OverflowError``.

The panel's draft (``exam/drafts.py``) has the same shape plus ``edited_at`` (the
browser's clock, ms): :func:`read_draft` reads it with the same checks and cuts
its texts to the form's own limits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reader_app.core.text_rules.answers import clean_model_text
from reader_app.exam.drafts import DraftValues
from reader_app.exam.location import location_answer
from reader_app.exam.next_case import CaseView
from reader_app.exam.report_submit import MAX_REPORT_CHARS, ReportAnswer, validate_report
from reader_app.exam.submit import MAX_DIAGNOSIS_CHARS, Answer, AnswerError, validate_answer

MAX_TEXT_CHARS = 20_000  # longer than any field allows: a value past it is not the panel's
MAX_NUMBER = 1e9  # past any coordinate, zoom, count or duration the viewer records
MAX_CLOCK_MS = 1e14  # a browser clock in ms since 1970 (year 5138)
NOT_SENT = "The answer did not arrive as the page sends it; please submit again."
BAD_NUMBER = "The {where} sent with the answer is not a finite number; please submit again."


@dataclass(frozen=True)
class Submission:
    """The panel's value, typed (nothing checked against the exam's rules yet)."""

    case_token: str
    form_key: str
    diagnosis: str | None
    findings: str
    impression: str
    likert: int | None
    idk: bool
    no_focal_finding: bool
    marker: Mapping[str, Any] | None
    record: dict[str, Any] | None
    active_ms: int | None


@dataclass(frozen=True)
class CheckedSubmission:
    """What the one store call needs: the answer, its location and the viewer record."""

    answer: Answer | ReportAnswer
    location_json: str | None
    interaction: dict[str, Any] | None
    active_ms: int | None


def _text(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_TEXT_CHARS:
        raise AnswerError(NOT_SENT)
    return value


def finite(value: object, where: str, high: float = MAX_NUMBER) -> float:
    """``value`` as a float when it is a finite number of a sane size, else AnswerError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AnswerError(BAD_NUMBER.format(where=where))
    if isinstance(value, int):
        if abs(value) > high:
            raise AnswerError(BAD_NUMBER.format(where=where))
        return float(value)
    if not math.isfinite(value) or abs(value) > high:
        raise AnswerError(BAD_NUMBER.format(where=where))
    return value


def read_submission(raw: object) -> Submission:
    """The panel's value as a :class:`Submission`; AnswerError when it is not one."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("case"), str):
        raise AnswerError(NOT_SENT)
    likert = raw.get("likert")
    if likert is not None and (isinstance(likert, bool) or not isinstance(likert, int)):
        raise AnswerError("Confidence must be a whole number from 0 to 4.", field="likert")
    marker = raw.get("marker")
    if marker is not None:
        if not isinstance(marker, Mapping):
            raise AnswerError(NOT_SENT)
        for axis in ("x", "y"):
            finite(marker.get(axis), f"marker's {axis}")
    record = raw.get("record")
    if record is not None and not isinstance(record, Mapping):
        raise AnswerError(NOT_SENT)
    active = raw.get("active_ms")
    active_ms = None if active is None else round(finite(active, "active time"))
    diagnosis = raw.get("diagnosis")
    return Submission(
        case_token=str(raw["case"]),
        form_key=str(raw.get("form_key") or ""),
        diagnosis=_text(raw, "diagnosis") if diagnosis is not None else None,
        findings=_text(raw, "findings"),
        impression=_text(raw, "impression"),
        likert=likert,
        idk=raw.get("idk") is True,
        no_focal_finding=raw.get("no_focal_finding") is True,
        marker=marker,
        record=None if record is None else clean_interaction(record),
        active_ms=active_ms,
    )


def read_draft(raw: object) -> DraftValues:
    """The panel's draft value, read as :func:`read_submission` reads a submit (the same
    AnswerError for wrong types and numbers that are not finite); its texts cut to the
    form's limits and cleared of forbidden characters, a confidence outside 0-4 dropped,
    the marker reduced to its point."""
    sub = read_submission(raw)
    assert isinstance(raw, Mapping)
    marker = None
    if sub.marker is not None:
        where = sub.marker.get("slice")
        marker = {
            "x": finite(sub.marker.get("x"), "marker's x"),
            "y": finite(sub.marker.get("y"), "marker's y"),
            "slice": None if where is None else round(finite(where, "marker's slice")),
        }
    edited = raw.get("edited_at")
    edited_at_ms = None if edited is None else round(finite(edited, "draft's time", MAX_CLOCK_MS))

    def text(value: str, limit: int) -> str:
        return clean_model_text(value[:limit])[0]

    return DraftValues(
        case_token=sub.case_token,
        diagnosis=None if sub.diagnosis is None else text(sub.diagnosis, MAX_DIAGNOSIS_CHARS),
        findings=text(sub.findings, MAX_REPORT_CHARS),
        impression=text(sub.impression, MAX_REPORT_CHARS),
        likert=sub.likert if sub.likert is not None and 0 <= sub.likert <= 4 else None,
        idk=sub.idk,
        no_focal_finding=sub.no_focal_finding,
        marker=marker,
        record=sub.record,
        active_ms=None if sub.active_ms is None else max(sub.active_ms, 0),
        edited_at_ms=edited_at_ms,
    )


def check_submission(
    sub: Submission,
    case: CaseView,
    *,
    report: bool,
    grounding: bool,
    grounding_required: bool,
) -> CheckedSubmission:
    """The exam's rules on one submission, in the order the reader fixes them."""
    answer: Answer | ReportAnswer = (
        validate_report(sub.findings, sub.impression, sub.likert, sub.idk)
        if report
        else validate_answer(sub.diagnosis, sub.likert, sub.idk)
    )
    location = None
    if grounding and not answer.idk:  # an "I don't know" answer carries no location
        location = location_answer(
            sub.marker,
            case=case,
            no_focal_finding=sub.no_focal_finding,
            required=grounding_required,
        )
    return CheckedSubmission(
        answer=answer, location_json=location, interaction=sub.record, active_ms=sub.active_ms
    )


# The viewer's window/level (viewer.js: WL_STORED, WL_WIDTH, WL_CENTER), in grey
# levels of the displayed 8-bit image: (width, centre) as stored, and the ranges.
WL_STORED = (255.0, 127.5)
WL_WIDTH = (1.0, 510.0)
WL_CENTER = (-128.0, 383.0)


def clean_interaction(raw: Mapping[str, object]) -> dict[str, Any]:
    """The viewer's record, reduced to known fields of the right types (it is input):
    ``slices_visited``, ``windows_used``, ``zoom_used``, ``pan_used``,
    ``one_to_one_used``, ``max_zoom``, ``thumbnail_clicks``, ``fullscreen_s``, and the
    window/level on screen at the submit, ``wl_used``, ``wl_width``, ``wl_center`` (grey
    levels of the displayed 8-bit image, ``WL_STORED`` when none was applied: viewer.js).
    A number that is not finite (NaN, a 400-digit integer) is refused (AnswerError);
    a finite one is held to its range."""

    def ints(v: object) -> list[int]:
        items = v if isinstance(v, list) else []
        out = set()
        for x in items[:10_000]:
            if isinstance(x, int | float) and not isinstance(x, bool):
                value = finite(x, "viewer record")
                if 0 < value < 10_000 and value == int(value):
                    out.add(int(value))
        return sorted(out)

    def words(v: object) -> list[str]:
        items = v if isinstance(v, list) else []
        return [str(x)[:32] for x in items if isinstance(x, str)][:16]

    def num(v: object, high: float, low: float = 0.0, missing: float = 0.0) -> float:
        number = isinstance(v, int | float) and not isinstance(v, bool)
        x = finite(v, "viewer record") if number else missing
        return round(min(max(x, low), high), 2)

    return {
        "slices_visited": ints(raw.get("slices_visited")),
        "windows_used": words(raw.get("windows_used")),
        "zoom_used": raw.get("zoom_used") is True,
        "pan_used": raw.get("pan_used") is True,
        "one_to_one_used": raw.get("one_to_one_used") is True,
        "max_zoom": num(raw.get("max_zoom"), 1000.0),
        "thumbnail_clicks": int(num(raw.get("thumbnail_clicks"), 1e6)),
        "fullscreen_s": num(raw.get("fullscreen_s"), 86_400.0),
        "wl_used": raw.get("wl_used") is True,
        "wl_width": num(raw.get("wl_width"), WL_WIDTH[1], WL_WIDTH[0], WL_STORED[0]),
        "wl_center": num(raw.get("wl_center"), WL_CENTER[1], WL_CENTER[0], WL_STORED[1]),
    }
