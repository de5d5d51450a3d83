"""The AI-aided step of a sequential study (reader_app/exam/aid.py): drawn only once the
reader's own (unaided) answer to the case is stored. The case's images, the model's
answer in its own labelled box, and a final-answer form whose fields keep the stable
accessible names (``Diagnosis``, ``N · <label>``, ``I don't know``) with ``Submit final
answer``. In a crossover study the same step draws a case read once in its arm: with
the model's box from the start (aided) or without it (unaided), the button ``Submit
answer``. The page passes what the service allowed; this module reads no database."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from reader_app.exam.aid import ModelAnswer
from reader_app.exam.next_case import CaseView
from reader_app.exam.report_submit import MAX_REPORT_CHARS
from reader_app.grounding.store import parse_location_json
from reader_app.ui.components.case_viewer import show_case_images
from reader_app.ui.components.safe_text import escape_markdown

AID_COLUMNS = [7, 3]
BOX_TITLE = "AI model's answer"
FIELDS = ("aid_diagnosis", "aid_findings", "aid_impression", "aid_likert", "aid_idk")


def model_box(shown: ModelAnswer, likert_labels: Sequence[str], *, crossover: bool = False) -> None:
    """The model's answer, in a bordered box of its own (CSS class ``st-key-aid_box``)."""
    with st.container(border=True, key="aid_box"):
        st.markdown(f"**{BOX_TITLE}**")
        if crossover:
            st.caption("This case is read with the model's answer. Yours may differ.")
        else:
            st.caption("Shown after your own answer, which is saved. Your final answer may differ.")
        if "diagnosis" in shown.show:
            text = "I don't know" if shown.idk else (shown.diagnosis or "(no answer)")
            st.markdown(f"Diagnosis: {escape_markdown(text)}")
        if "confidence" in shown.show and shown.likert is not None:
            label = likert_labels[shown.likert]
            st.markdown(f"Confidence: {shown.likert} · {escape_markdown(label)}")
        if "marker" in shown.show:
            point, nff = parse_location_json(shown.location_json)
            if nff:
                st.markdown("Marker: no focal finding")
            elif point is not None:
                where = f"slice {point.slice}, " if point.slice is not None else ""
                st.markdown(
                    f"Marker: {where}x {point.x:.0f}, y {point.y:.0f} (image pixels), "
                    "the dashed blue ring on the image"
                )
        if "report" in shown.show:
            for title, body in (("Findings", shown.findings), ("Impression", shown.impression)):
                if body:
                    st.markdown(f"{title}: {escape_markdown(body)}")


def final_answer(suffix: str = "") -> tuple[str, int | None, bool]:
    """What the final-answer form holds: (diagnosis, likert, idk). ``suffix``: as given
    to :func:`aid_step`."""
    likert = st.session_state.get(f"aid_likert{suffix}")
    return (
        str(st.session_state.get(f"aid_diagnosis{suffix}") or ""),
        int(str(likert).split(" ", 1)[0]) if likert else None,
        bool(st.session_state.get(f"aid_idk{suffix}")),
    )


def final_report(suffix: str = "") -> tuple[str, str]:
    """A report case's form: (findings, impression); the confidence and IDK as in
    :func:`final_answer`."""
    return (
        str(st.session_state.get(f"aid_findings{suffix}") or ""),
        str(st.session_state.get(f"aid_impression{suffix}") or ""),
    )


def aid_step(
    case: CaseView,
    shown: ModelAnswer | None,
    likert_labels: Sequence[str],
    on_submit: Callable[[], None],
    *,
    theme: str,
    error: str | None = None,
    crossover: bool = False,
    suffix: str = "",
    report: bool = False,
) -> None:
    """The aided step of one case: images on the left, the model's box and the form right.

    ``crossover``: a crossover case, read once in its arm: with the model's answer from
    the start (``shown``) or on the reader's own (``shown`` None, no box). ``report``: a
    report case, answered with ``Findings`` and ``Impression`` instead of ``Diagnosis``."""
    point = None
    if shown is not None and "marker" in shown.show:
        point = parse_location_json(shown.location_json)[0]
    left, right = st.columns(AID_COLUMNS, gap="medium")
    with left:
        show_case_images(case, theme=theme, model_marker=point)
    with right:
        if shown is not None:
            model_box(shown, likert_labels, crossover=crossover)
        if crossover:
            st.markdown("**Your answer**")
        else:
            st.markdown("**Your final answer**")
        if report:
            st.text_area("Findings", key=f"aid_findings{suffix}", max_chars=MAX_REPORT_CHARS)
            st.text_area("Impression", key=f"aid_impression{suffix}", max_chars=MAX_REPORT_CHARS)
        else:
            st.text_input("Diagnosis", key=f"aid_diagnosis{suffix}", max_chars=300)
        st.radio(
            "Confidence",
            [f"{i} · {label}" for i, label in enumerate(likert_labels)],
            index=None,
            key=f"aid_likert{suffix}",
        )
        st.checkbox("I don't know", key=f"aid_idk{suffix}")
        if error:
            st.error(error)
        st.button(
            "Submit answer" if crossover else "Submit final answer",
            key="aid_submit",
            type="primary",
            on_click=on_submit,
            width="stretch",
        )


def clear_form(suffix: str = "") -> None:
    """A fresh form for the next aided step."""
    for key in FIELDS:
        st.session_state.pop(f"{key}{suffix}", None)
