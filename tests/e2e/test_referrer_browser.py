"""Issue 14 finding 10: the sign-in token never leaves in a Referer header (Chromium's log).

On main 124 of 125 same-origin requests made after opening ``/?token=...``
carried ``Referer: .../?token=...``. Here Chromium's own network log (the
DevTools protocol: the headers actually put on the wire, WebSocket handshakes
included) is recorded while a reader signs in with a link, answers a case and
sees the next; no request may carry a Referer at all, and the page must have
sent requests while its address still held the token (else the test proves
nothing).
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.models import Response
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import diagnosis_box, likert_choice, settled, submit_button
from tests.factories import make_reader, make_study

pytestmark = [pytest.mark.browser]


def test_no_request_carries_the_token_in_referer(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    token = make_reader(session, study, code="R01", ready=True).token
    session.commit()

    sent: dict[str, dict[str, Any]] = {}  # requestId -> url, documentURL, wire headers
    handshakes: list[dict[str, Any]] = []
    cdp = page.context.new_cdp_session(page)
    cdp.on(
        "Network.requestWillBeSent",
        lambda e: sent.setdefault(e["requestId"], {}).update(
            url=e["request"]["url"], document=e.get("documentURL", "")
        ),
    )
    cdp.on(
        "Network.requestWillBeSentExtraInfo",
        lambda e: sent.setdefault(e["requestId"], {}).update(headers=e["headers"]),
    )
    cdp.on("Network.webSocketWillSendHandshakeRequest", lambda e: handshakes.append(e))
    cdp.send("Network.enable")

    page.goto(f"{served.url}/?token={token}")
    expect(submit_button(page)).to_be_visible(timeout=60_000)
    settled(page)
    diagnosis_box(page).click()
    page.keyboard.type("Pneumothorax")
    page.keyboard.press("Tab")  # Streamlit commits a text input on blur
    likert_choice(page, 3).click()
    submit_button(page).click()
    expect(page.locator("[data-testid=stProgress]").first).to_contain_text("Case 2 of 2")
    settled(page)
    page.screenshot(path=str(artifact("referrer-exam.png")))
    session.expire_all()
    stored = session.exec(select(Response)).all()
    assert [(r.diagnosis, r.likert) for r in stored] == [("Pneumothorax", 3)]

    same_origin = [r for r in sent.values() if r.get("url", "").startswith(served.url)]
    with_token_document = [r for r in same_origin if "token=" in r.get("document", "")]
    assert len(same_origin) >= 20, len(same_origin)
    assert with_token_document, "no request was made while the address held the token"
    referers = [
        (r["url"], v)
        for r in same_origin
        for k, v in r.get("headers", {}).items()
        if k.lower() == "referer"
    ]
    assert referers == []
    assert handshakes, "the app's websocket was not seen"
    for shake in handshakes:
        headers = {k.lower(): v for k, v in shake["request"]["headers"].items()}
        assert "referer" not in headers and token not in str(headers)
    assert all(token not in str(r.get("headers", {})) for r in same_origin)
