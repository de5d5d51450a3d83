"""The adjudicator's grading form: grade, note and decision buttons, keys handled by us.

An ``st.components.v2`` element of ours (``ui/static/grading_keys.js``), because
Streamlit ignores button shortcuts while one of its fields has the focus and
hands a field's value over only when it loses the focus: "type 32, press G"
needed a click in between (issue 29). In this form the grade field takes
digits only, so a letter typed there is a key (G saves, S skips); in the note,
Enter or Escape leaves the field and the next key decides. A decision reaches
Python as ONE trigger value, ``action``: ``{item, action, grade, note}``, the
fields as they were when the key was pressed.

Stable names: the element's key is ``adj_form`` (diagnoses) or ``rubric_form``
(reports); fields carry ``data-field`` = ``adj_note`` / ``rubric_score`` /
``rubric_note`` and the buttons ``adj_correct``, ``adj_incorrect``,
``adj_skip``, ``adj_correct_synonym``, ``rubric_save``, ``rubric_skip``, each
with its accessible name (the label) and ``aria-keyshortcuts``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

from reader_app.ui.components.case_viewer import sent_value, static_text

ACTION_EVENT = "action"
MAX_NOTE_CHARS = 2000
NOTE_HELP = "Enter or Esc leaves the note; then a key decides."

_form = st.components.v2.component(
    "readerstudy_grading_keys",
    js=static_text("dom.js", "grading_keys.js"),
    css=static_text("grading_keys.css"),
    isolate_styles=True,
)


@dataclass(frozen=True)
class GradeAction:
    action: str  # what the trigger value names
    label: str  # the button's text and accessible name
    key: str  # its keyboard key
    field: str  # data-field (the old widget key)
    primary: bool = False
    wide: bool = False


@dataclass(frozen=True)
class GradeField:
    label: str
    field: str
    help: str
    save: str  # the key Enter in the field stands for


def submitted_action(key: str) -> dict[str, Any] | None:
    """The trigger value of form ``key`` in its callback (None outside one, or malformed)."""
    value = sent_value(key, ACTION_EVENT)
    return value if isinstance(value, dict) else None


def grading_form(
    *,
    key: str,
    item: str,
    actions: Sequence[GradeAction],
    on_action: Callable[[], None],
    note_field: str,
    grade: GradeField | None = None,
    saved: int = 0,
) -> None:
    """The form for queue item ``item``; ``on_action`` reads :func:`submitted_action`.

    ``saved`` counts decisions made in this session: when it changes, the fields
    start empty (otherwise a redraw of the same item keeps what was typed)."""
    _form(
        key=key,
        data={
            "item": item,
            "saved": saved,
            "grade": asdict(grade) if grade is not None else None,
            "note": {
                "label": "Note (optional)",
                "field": note_field,
                "help": NOTE_HELP,
                "max_chars": MAX_NOTE_CHARS,
            },
            "actions": [asdict(a) for a in actions],
        },
        on_action_change=on_action,
    )
