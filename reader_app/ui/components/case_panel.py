"""The exam's case panel: the viewer, the marker and the answer form as ONE element.

An ``st.components.v2`` element of ours (``ui/static/viewer.js`` + ``panel.js``
on the vendored Panzoom). Whatever gesture submits the form (a click or tap on
"Submit answer", Enter or Space on the focused button, Enter in the diagnosis
box, Ctrl+Enter anywhere), the panel sends ONE trigger value, ``submit``, built
from its own state at that moment: case token, fields, marker, viewer record,
active time (``reader_app.exam.submission`` reads and checks it). There are no
hidden inputs and no writes into Streamlit's widgets.

Stable names (DESIGN.md section 4): the element's key is ``panel``; each field
carries ``data-field="<key>"`` (``diagnosis`` or ``findings`` + ``impression``,
``likert``, ``idk``, ``no_focal_finding``, ``submit``) and its accessible name
(Diagnosis, Findings, Impression, ``N · <label>``, I don't know, No focal
finding, the submit's label); the panel carries ``data-case="<public id>"``.

The server says what the form shows beyond the reader's own input: the
submit's label, an earlier answer being changed (``values``) and the last
refusal (``error``). ``attempt`` changes with every submit handled, so a
refusal repeated word for word still reaches the panel (which then keeps what
the reader typed and re-enables Submit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.exam.report_submit import MAX_REPORT_CHARS
from reader_app.exam.submit import MAX_DIAGNOSIS_CHARS
from reader_app.study.config import DEFAULT_LIKERT
from reader_app.ui.components.case_viewer import (
    STATIC,
    VIEWER_CSS,
    VIEWER_JS,
    page_css,
    viewer_data,
)
from reader_app.ui.components.image_urls import first_images, image_url
from scoring import Location

PANEL_KEY = "panel"
SUBMIT_EVENT = "submit"
SUBMIT_SHORTCUT = "Ctrl+Enter"  # docs/exam.md lists it

_panel = st.components.v2.component(
    "readerstudy_case_panel",
    js=VIEWER_JS + "\n" + (STATIC / "panel.js").read_text(encoding="utf-8"),
    css=VIEWER_CSS + "\n" + (STATIC / "panel.css").read_text(encoding="utf-8"),
    isolate_styles=True,
)


@dataclass(frozen=True)
class PanelForm:
    """What the answer form shows besides the reader's own input."""

    mode: str = "diagnosis"  # or "report" (Findings + Impression)
    submit_label: str = "Submit answer"
    likert_labels: Sequence[str] = DEFAULT_LIKERT
    grounding_required: bool = True
    form_key: str = "exam"  # "review" when an earlier answer is being changed
    values: Mapping[str, Any] | None = None  # an earlier answer, to change
    error: str | None = None
    error_field: str | None = None
    attempt: int = 0


def submitted_value() -> object:
    """The panel's submit value in its callback (None outside one)."""
    result = st.session_state.get(PANEL_KEY)
    if result is None:
        return None
    try:
        return result[SUBMIT_EVENT]
    except (KeyError, TypeError):
        return getattr(result, SUBMIT_EVENT, None)


def case_panel(
    case: CaseView,
    form: PanelForm,
    on_submit: Callable[[], None],
    *,
    windows: Sequence[str] = (),
    theme: str = "dark",
    grounding: bool = False,
    marker: Location | None = None,
    history: str | None = None,
    note: str | None = None,
    following: CaseView | None = None,
) -> None:
    """The case panel for ``case``; ``on_submit`` runs as the submit's callback (read the
    value with :func:`submitted_value`). ``following``: the next case, whose first
    images the panel fetches and decodes once this case's image is in."""
    page_css(theme)
    viewer = viewer_data(case, windows=windows, theme=theme, grounding=grounding, marker=marker)
    if viewer is None:
        st.warning("This case has no images.")
        return
    labels = list(form.likert_labels or DEFAULT_LIKERT)
    prefetch = (
        [image_url(img.sha256) for img in first_images(following, windows)]
        if following is not None
        else []
    )
    _panel(
        key=PANEL_KEY,
        data={
            "case": case.public_id,
            "form_key": form.form_key,
            "theme": viewer["theme"],
            "viewer": viewer,
            "history": history or "",
            "note": note or "",
            "prefetch": prefetch,
            "form": {
                "mode": form.mode,
                "submit_label": form.submit_label,
                "likert_labels": labels,
                "grounding_required": form.grounding_required,
                "max_chars": MAX_REPORT_CHARS if form.mode == "report" else MAX_DIAGNOSIS_CHARS,
                "values": dict(form.values) if form.values else None,
                "error": None
                if form.error is None
                else {"message": form.error, "field": form.error_field},
                "attempt": form.attempt,
            },
        },
        on_submit_change=on_submit,
    )
