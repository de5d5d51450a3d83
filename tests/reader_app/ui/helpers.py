"""Small AppTest helpers shared by the page tests."""

from __future__ import annotations

from collections.abc import Iterator

from sqlmodel import Session, col, select
from streamlit.testing.v1 import AppTest

from reader_app.models import Response


def progress_text(at: AppTest) -> str:
    bars = at.get("progress")
    return bars[0].proto.text if bars else ""


def answer(at: AppTest, diagnosis: str, likert: int) -> AppTest:
    at.text_input(key="diagnosis").set_value(diagnosis)
    at.radio(key="likert").set_value(likert)
    return at.button(key="submit").click().run()


def answer_idk(at: AppTest) -> AppTest:
    at.button(key="idk").click().run()
    return at.button(key="submit").click().run()


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
