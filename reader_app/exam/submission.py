"""One submitted answer, as the case panel sent it, checked once.

The case panel (``ui/static/panel.js``) sends ONE value per submit, built from what is on
screen at that moment; its shape is declared once, by :class:`PanelValue` (and
:class:`PanelDraft`, the same plus the browser's clock). Everything in it is input:
:func:`read_submission` validates it in one step (pydantic, strict types, unknown fields
refused, texts bounded) and turns it into a typed :class:`Submission`; a value of another
shape is a clear :class:`AnswerError`, never an exception from deep inside.
:func:`check_submission` applies the exam's rules (the diagnosis or report rules, the
confidence rule, the location on the image) and returns what one store call needs. Numbers
must be finite and of a sane size: a NaN or a 400-digit integer in the marker or the viewer
record is refused with a message, never stored and never an ``OverflowError``.

The panel's draft (``exam/drafts.py``) has the same shape plus ``edited_at`` (the
browser's clock, ms): :func:`read_draft` reads it with the same checks and cuts
its texts to the form's own limits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
BAD_LIKERT = "Confidence must be a whole number from 0 to 4."

# a finite number of a sane size (an int or a float, never a bool or a string)
_Number = Annotated[float, Field(ge=-MAX_NUMBER, le=MAX_NUMBER, allow_inf_nan=False)]
_Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


class PanelMarker(BaseModel):
    """The viewer's marker (ui/static/viewer.js): a point in stored-image pixels and, on a
    strip, its slice (checked against the case's images by exam.location); ``case`` names
    the case it was placed on (a stale page's marker counts as none)."""

    model_config = _STRICT

    x: _Number
    y: _Number
    slice: int | float | None = None
    case: str | None = None


class PanelValue(BaseModel):
    """The case panel's submit value (ui/static/panel.js), the one declaration of its shape.

    The fields are listed in the order a wrong value is reported (the first one wins).
    """

    model_config = _STRICT

    case: str  # the case's public id
    likert: int | None = None  # 0-4, checked by the exam's rules
    marker: PanelMarker | None = None  # grounding studies
    record: dict[str, Any] | None = None  # the viewer record (clean_interaction reduces it)
    active_ms: _Number | None = None  # time the case page was visible
    diagnosis: _Text | None = None  # None: the form has no diagnosis field
    findings: _Text | None = None
    impression: _Text | None = None
    form_key: str | None = None  # the form drawn ("review" for a stored answer changed)
    idk: bool = False
    no_focal_finding: bool = False


class PanelDraft(PanelValue):
    """The panel's draft: the submit's shape plus the browser's clock at the last edit."""

    edited_at: Annotated[float, Field(ge=-MAX_CLOCK_MS, le=MAX_CLOCK_MS, allow_inf_nan=False)] | (
        None
    ) = None


_Value = TypeVar("_Value", bound=PanelValue)

# where a wrong number is named in the message: the field's path -> its name for the reader
_NUMBERS: dict[tuple[int | str, ...], str] = {
    ("marker", "x"): "marker's x",
    ("marker", "y"): "marker's y",
    ("active_ms",): "active time",
    ("edited_at",): "draft's time",
}


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


def _validated(model: type[_Value], raw: object) -> _Value:
    """``raw`` validated once as ``model``; the first wrong field as the reader's message."""
    if not isinstance(raw, Mapping):
        raise AnswerError(NOT_SENT)
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        loc = tuple(exc.errors()[0]["loc"])
    if loc[:1] == ("likert",):
        raise AnswerError(BAD_LIKERT, field="likert") from None
    if (where := _NUMBERS.get(loc[:2]) or _NUMBERS.get(loc[:1])) is not None:
        raise AnswerError(BAD_NUMBER.format(where=where)) from None
    raise AnswerError(NOT_SENT) from None


def _submission(value: PanelValue) -> Submission:
    marker = value.marker
    return Submission(
        case_token=value.case,
        form_key=value.form_key or "",
        diagnosis=value.diagnosis,
        findings=value.findings or "",
        impression=value.impression or "",
        likert=value.likert,
        idk=value.idk,
        no_focal_finding=value.no_focal_finding,
        marker=None if marker is None else marker.model_dump(exclude_unset=True),
        record=None if value.record is None else clean_interaction(value.record),
        active_ms=None if value.active_ms is None else round(value.active_ms),
    )


def read_submission(raw: object) -> Submission:
    """The panel's value as a :class:`Submission`; AnswerError when it is not one."""
    return _submission(_validated(PanelValue, raw))


def read_draft(raw: object) -> DraftValues:
    """The panel's draft value, read as :func:`read_submission` reads a submit (the same
    AnswerError for wrong types and numbers that are not finite); its texts cut to the
    form's limits and cleared of forbidden characters, a confidence outside 0-4 dropped,
    the marker reduced to its point."""
    draft = _validated(PanelDraft, raw)
    sub = _submission(draft)
    marker = None
    if sub.marker is not None:
        where = sub.marker.get("slice")
        marker = {
            "x": finite(sub.marker.get("x"), "marker's x"),
            "y": finite(sub.marker.get("y"), "marker's y"),
            "slice": None if where is None else round(finite(where, "marker's slice")),
        }
    edited_at_ms = None if draft.edited_at is None else round(draft.edited_at)

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
    record = sub.record
    if isinstance(record, dict) and record.get("original_values"):
        # the original values are only what the case has them for (ingest stored them)
        record = {
            **record,
            "original_values": all(img.values_sha256 for img in case.reader_images),
        }
    return CheckedSubmission(
        answer=answer, location_json=location, interaction=record, active_ms=sub.active_ms
    )


# The viewer's window/level (viewer.js: WL_STORED, WL_WIDTH, WL_CENTER), in grey
# levels of the displayed 8-bit image: (width, centre) as stored, and the ranges.
WL_STORED = (255.0, 127.5)
WL_WIDTH = (1.0, 510.0)
WL_CENTER = (-128.0, 383.0)
MAX_MEASUREMENTS = 50  # viewer.js MAX_MEASURES


def clean_interaction(raw: Mapping[str, object]) -> dict[str, Any]:
    """The viewer's record, reduced to known fields of the right types (it is input):
    ``slices_visited``, ``windows_used``, ``zoom_used``, ``pan_used``,
    ``one_to_one_used``, ``max_zoom``, ``thumbnail_clicks``, ``fullscreen_s``, and the
    window/level on screen at the submit, ``wl_used``, ``wl_width``, ``wl_center`` (grey
    levels of the displayed 8-bit image, ``WL_STORED`` when none was applied: viewer.js)
    and ``wl_hu`` (the same in Hounsfield units on an HU preset, else None), the
    negative (``invert_used``, ``inverted`` at the submit), and ``measurements``, the
    distances measured (``slice``, the two points in stored pixels, ``px`` and ``mm``,
    None without a pixel spacing), and ``original_values``, whether W/L worked on the
    slices' original values (the study option). A number that is not finite (NaN, a
    400-digit integer) is refused (AnswerError); a finite one is held to its range."""

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

    def hu(v: object) -> dict[str, float] | None:
        if not isinstance(v, Mapping):
            return None
        return {
            "width": num(v.get("width"), 100_000.0),
            "center": num(v.get("center"), 100_000.0, -100_000.0),
        }

    def measures(v: object) -> list[dict[str, float | int | None]]:
        out: list[dict[str, float | int | None]] = []
        for m in (v if isinstance(v, list) else [])[:MAX_MEASUREMENTS]:
            if not isinstance(m, Mapping):
                continue
            where = m.get("slice")
            out.append(
                {
                    "slice": int(num(where, 10_000.0)) if where is not None else None,
                    **{k: num(m.get(k), 100_000.0) for k in ("x1", "y1", "x2", "y2", "px")},
                    "mm": None if m.get("mm") is None else num(m.get("mm"), 100_000.0),
                }
            )
        return out

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
        "wl_hu": hu(raw.get("wl_hu")),
        "invert_used": raw.get("invert_used") is True,
        "inverted": raw.get("inverted") is True,
        "measurements": measures(raw.get("measurements")),
        "original_values": raw.get("original_values") is True,
    }
