"""Small AppTest helpers shared by the page tests."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from sqlmodel import Session, col, select
from streamlit.testing.v1 import AppTest

from reader_app.models import Response


def progress_text(at: AppTest) -> str:
    bars = at.get("progress")
    return bars[0].proto.text if bars else ""


def field(widgets: Iterable[Any], name: str) -> Any:
    """The widget of the answer form's field ``name`` in the form's current drawing
    (keyed ``<name>__<drawing>``, see answer_form.field_key)."""
    found = [w for w in widgets if re.fullmatch(rf"{name}__\d+", getattr(w, "key", None) or "")]
    assert len(found) == 1, f"{len(found)} widgets for the form field {name!r}"
    return found[0]


def answer(at: AppTest, diagnosis: str, likert: int) -> AppTest:
    field(at.text_input, "diagnosis").set_value(diagnosis)
    field(at.radio, "likert").set_value(likert)
    return field(at.button, "submit").click().run()


def answer_idk(at: AppTest) -> AppTest:
    field(at.checkbox, "idk").check()
    return field(at.button, "submit").click().run()


def responses(session: Session) -> list[Response]:
    session.expire_all()
    return list(session.exec(select(Response).order_by(col(Response.id))))


def _walk(node: object) -> Iterator[object]:
    yield node
    children = getattr(node, "children", None) or {}
    for child in children.values():
        yield from _walk(child)


def texts(at: AppTest) -> str:
    """Everything the app sent to the browser, as text: every element's protobuf message
    (labels, values, markdown, captions, image URLs, widget ids) in the rendered tree."""
    return "\n".join(str(getattr(n, "proto", "")) for n in _walk(at._tree))


def images(at: AppTest) -> list[str]:
    """The URL of every image on the page (a list given to one st.image counts each)."""
    return [url for element in at.get("image") for url in element.value]  # type: ignore[attr-defined]


def viewer_data(at: AppTest) -> dict[str, Any]:
    """The data the case viewer element was given (windows, frames, labels, URLs)."""
    (element,) = [e for e in at.get("bidi_component") if getattr(e, "key", None) == "viewer"]
    return dict(json.loads(element.proto.json))  # type: ignore[attr-defined]


def viewer_images(at: AppTest) -> list[str]:
    """Every frame URL the case viewer was given (all windows), none if no viewer."""
    found = [e for e in at.get("bidi_component") if getattr(e, "key", None) == "viewer"]
    if not found:
        return []
    data = json.loads(found[0].proto.json)  # type: ignore[attr-defined]
    return [f["url"] for w in data["windows"] for f in w["images"]]
