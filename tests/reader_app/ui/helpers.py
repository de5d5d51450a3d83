"""Small AppTest helpers shared by the page tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sqlmodel import Session, col, select
from streamlit.testing.v1 import AppTest

from reader_app.models import Response


def progress_text(at: AppTest) -> str:
    bars = at.get("progress")
    return bars[0].proto.text if bars else ""


def panel_data(at: AppTest) -> dict[str, Any]:
    """The data the case panel element was given (its viewer, form, history, error)."""
    found = [e for e in at.get("bidi_component") if getattr(e, "key", None) == "panel"]
    assert len(found) == 1, f"{len(found)} case panels on the page"
    return dict(json.loads(found[0].proto.json))  # type: ignore[attr-defined]


def has_panel(at: AppTest) -> bool:
    return any(getattr(e, "key", None) == "panel" for e in at.get("bidi_component"))


def panel_error(at: AppTest) -> str:
    """The message the panel shows above Submit ("" when none, or no panel)."""
    if not has_panel(at):
        return ""
    error = panel_data(at)["form"]["error"]
    return str(error["message"]) if error else ""


def panel_submit(at: AppTest, value: object = None, **fields: object) -> AppTest:
    """Send the panel's one submit value, as panel.js does, and run the page.

    By default the value is the one panel.js builds for the case on screen, with
    ``fields`` (diagnosis, likert, idk, no_focal_finding, marker, record, ...) filled
    in; ``value`` sends exactly that instead (hostile input)."""
    (element,) = [e for e in at.get("bidi_component") if getattr(e, "key", None) == "panel"]
    if value is None:
        data = json.loads(element.proto.json)
        value = {
            "case": data["case"],
            "form_key": data["form_key"],
            "diagnosis": "",
            "likert": None,
            "idk": False,
            "marker": None,
            "record": None,
            "active_ms": 1000,
            **fields,
        }
    states = at._tree.get_widget_states()
    trigger = states.widgets.add()
    trigger.id = f"$$STREAMLIT_INTERNAL_KEY_{element.proto.id}__events"
    trigger.json_trigger_value = json.dumps([{"event": "submit", "value": value}])
    return at._run(states)


def answer(at: AppTest, diagnosis: str, likert: int) -> AppTest:
    return panel_submit(at, diagnosis=diagnosis, likert=likert)


def answer_idk(at: AppTest) -> AppTest:
    return panel_submit(at, idk=True)


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


def _viewer_element_data(at: AppTest) -> dict[str, Any] | None:
    """The viewer's data: inside the case panel, or the viewer-only element's."""
    for e in at.get("bidi_component"):
        key = getattr(e, "key", None)
        if key == "panel":
            return dict(json.loads(e.proto.json)["viewer"])
        if key == "viewer":
            return dict(json.loads(e.proto.json))
    return None


def viewer_data(at: AppTest) -> dict[str, Any]:
    """The data the case viewer was given (windows, frames, labels, URLs)."""
    data = _viewer_element_data(at)
    assert data is not None, "no viewer on the page"
    return data


def viewer_images(at: AppTest) -> list[str]:
    """Every frame URL the case viewer was given (all windows), none if no viewer."""
    data = _viewer_element_data(at)
    if data is None:
        return []
    return [f["url"] for w in data["windows"] for f in w["images"]]
