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

The tab's own copies (``tab_storage``) are filed under ``owner``, the reader's
opaque tab key: another reader's panel, or Sign out, drops them.

Drafts (``reader_app.exam.drafts``): the panel reports its draft as a state
value, ``draft`` (the submit's shape plus ``edited_at``), about a second after
the last change, at once when a field loses the focus, and when the tab is
hidden; ``on_draft`` keeps it. The server's draft of the case comes back in the
panel's data as ``draft`` (or null); the panel keeps the newer of it and its
tab's copy, and continues the viewer record and the active time from it.

The server says what the form shows beyond the reader's own input: the
submit's label, an earlier answer being changed (``values``) and the last
refusal (``error``). ``attempt`` changes with every submit handled, so a
refusal repeated word for word still reaches the panel (which then keeps what
the reader typed and re-enables Submit).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit import config

from reader_app.exam.drafts import DraftValues
from reader_app.exam.next_case import CaseView
from reader_app.exam.report_submit import MAX_REPORT_CHARS
from reader_app.exam.submit import MAX_DIAGNOSIS_CHARS
from reader_app.study.config import DEFAULT_LIKERT
from reader_app.ui.components.case_viewer import (
    VIEWER_CSS,
    VIEWER_JS,
    page_css,
    sent_value,
    static_text,
    viewer_data,
)
from reader_app.ui.components.image_urls import first_images, image_url
from scoring import Location

PANEL_KEY = "panel"
SUBMIT_EVENT = "submit"
DRAFT_STATE = "draft"
SUBMIT_SHORTCUT = "Ctrl+Enter"  # docs/exam.md lists it

_panel = st.components.v2.component(
    "readerstudy_case_panel",
    js=VIEWER_JS + "\n" + static_text("panel.js"),
    css=VIEWER_CSS + "\n" + static_text("panel.css"),
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


def _panel_value(name: str) -> object:
    return sent_value(PANEL_KEY, name)


log = logging.getLogger(__name__)
# what the panel sent over Streamlit's websocket instead of the exam door, per kind
# ("answer", "draft"), in this server process: logged and counted, never silent
STREAMLIT_PATH: Counter[str] = Counter()
_STREAMLIT_PATH_LOCK = threading.Lock()


def streamlit_path_taken(kind: str) -> int:
    """The panel's ``kind`` came over Streamlit, not through the exam door (unreachable: a
    restarted server, a lost connection, a proxy that drops the route): a WARNING in the
    server log, and the count so far in this process, which it returns."""
    with _STREAMLIT_PATH_LOCK:
        STREAMLIT_PATH[kind] += 1
        count = STREAMLIT_PATH[kind]
    log.warning(
        "exam door not reached: the panel's %s came over Streamlit's websocket "
        "(%d so far in this server)",
        kind,
        count,
    )
    return count


def submitted_value() -> object:
    """The panel's submit value in its callback (None outside one)."""
    return _panel_value(SUBMIT_EVENT)


def drafted_value() -> object:
    """The panel's last reported draft, in its ``on_draft`` callback (None before one)."""
    return _panel_value(DRAFT_STATE)


def draft_data(draft: DraftValues | None) -> dict[str, Any] | None:
    """The server's draft as the panel's data carries it (``data.draft``)."""
    if draft is None:
        return None
    return {
        "diagnosis": draft.diagnosis,
        "findings": draft.findings,
        "impression": draft.impression,
        "likert": draft.likert,
        "idk": draft.idk,
        "no_focal_finding": draft.no_focal_finding,
        "marker": draft.marker,
        "record": draft.record,
        "active_ms": draft.active_ms,
        "edited_at": draft.edited_at_ms,
    }


@dataclass(frozen=True)
class PanelCase:
    """One case as the panel draws it: the case, its form and what goes around it."""

    case: CaseView
    form: PanelForm
    marker: Location | None = None
    history: str | None = None
    note: str | None = None
    draft: DraftValues | None = None


DOOR = "_readerstudy/exam"  # the exam door's route (web/exam_door.py serves it)


def door_url() -> str:
    """The door's path as the browser reaches it (under ``server.baseUrlPath``)."""
    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/{DOOR}" if base else f"/{DOOR}"


@dataclass(frozen=True)
class ExamDoor:
    """Where the panel posts its answer and its last draft (``web/exam_door.py``)."""

    url: str  # the door's base path: ``<url>/answer``, ``<url>/draft``
    session: str  # this browser session's id (the door finds its exam state by it)


def _case_data(
    shown: PanelCase,
    *,
    theme: str,
    grounding: bool,
    notice: str | None = None,
    original_values: bool = False,
) -> dict[str, Any] | None:
    """The panel's data for one case; None when the case has no images."""
    viewer = viewer_data(
        shown.case,
        theme=theme,
        grounding=grounding,
        marker=shown.marker,
        original_values=original_values,
    )
    if viewer is None:
        return None
    form = shown.form
    labels = list(form.likert_labels or DEFAULT_LIKERT)
    return {
        "case": shown.case.public_id,
        "form_key": form.form_key,
        "theme": viewer["theme"],
        "viewer": viewer,
        "history": shown.history or "",
        "note": shown.note or "",
        "notice": notice or "",
        "draft": draft_data(shown.draft),
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
    }


def case_panel(
    shown: PanelCase,
    on_submit: Callable[[], None],
    *,
    theme: str = "dark",
    grounding: bool = False,
    notice: str | None = None,
    following: PanelCase | None = None,
    door: ExamDoor | None = None,
    on_draft: Callable[[], None] | None = None,
    owner: str = "",
    original_values: bool = False,
) -> None:
    """The case panel for ``shown``; ``on_submit`` runs as the submit's callback when the
    answer comes through Streamlit (read the value with :func:`submitted_value`).
    ``following``: the next case, whose first images the panel fetches and decodes once
    this case's image is in, and which it shows as soon as the exam ``door`` (when given)
    acknowledges the answer's commit (its trigger ``advanced`` then asks for the page
    run that draws the page around it: nothing runs for it). ``notice``: what the last
    submit did ("Saved your answer to case 3."), said in the panel's status line (a
    toast of ours, never over Pause or Submit).
    ``shown.draft``: the server's draft of the case; ``on_draft`` runs when the panel
    reports a new one (read it with :func:`drafted_value`).
    ``owner``: the signed-in reader's opaque tab key (``tab_storage.tab_owner``), which
    the tab's copies of drafts, active time and viewer record are filed under; "" keeps
    nothing in the tab's storage. ``original_values``: the study option (the viewer
    windows the slices' original values)."""
    page_css(theme)
    data = _case_data(
        shown, theme=theme, grounding=grounding, notice=notice, original_values=original_values
    )
    if data is None:
        st.warning("This case has no images.")
        return
    ahead = (
        None
        if following is None
        else _case_data(
            following, theme=theme, grounding=grounding, original_values=original_values
        )
    )
    _panel(
        key=PANEL_KEY,
        data={
            **data,
            "prefetch": []
            if following is None
            else [image_url(img.sha256) for img in first_images(following.case)],
            "following": ahead if door is not None else None,
            "door": None if door is None else {"url": door.url, "session": door.session},
            "owner": owner,
        },
        on_submit_change=on_submit,
        on_draft_change=on_draft or _ignore,
        on_advanced_change=_ignore,
    )


def _ignore() -> None:
    """A value whose page run is all it asks for (``advanced``; a draft without ``on_draft``)."""
