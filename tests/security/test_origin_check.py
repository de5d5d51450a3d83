"""reader_app/web/origin_check.py on its own: which origins pass, behind a proxy included."""

from __future__ import annotations

from typing import Any

import pytest

from reader_app.web.origin_check import SameOrigin
from tests.support.asgi_call import run_call


def _answer(scope_type: str, origin: str | None, host: str, method: str = "PUT") -> Any:
    """What the middleware sends for one request: "passed" or the refusal's first message."""
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        sent.append({"type": "passed"})

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
    scope = {"type": scope_type, "method": method, "path": "/_stcore/stream", "headers": headers}
    gate = SameOrigin(app, allowed=["https://readers.example.org"])
    run_call(gate(scope, receive, send))
    return sent[0]


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        ("http://127.0.0.1:8501", "127.0.0.1:8501"),  # the same server
        ("https://readers.example.org", "10.0.0.5:8501"),  # the public address, via a proxy
        (None, "127.0.0.1:8501"),  # no Origin: not a browser's cross-site request
    ],
)
def test_same_origin_and_the_public_address_pass(origin: str | None, host: str) -> None:
    assert _answer("websocket", origin, host) == {"type": "passed"}
    assert _answer("http", origin, host) == {"type": "passed"}


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "null", "http://127.0.0.1:9999", "https://readers.example.org.evil"],
)
def test_other_origins_are_refused(origin: str) -> None:
    assert _answer("websocket", origin, "127.0.0.1:8501") == {
        "type": "websocket.close",
        "code": 1008,
    }
    refused = _answer("http", origin, "127.0.0.1:8501")
    assert refused["type"] == "http.response.start" and refused["status"] == 403


def test_reads_pass_whatever_their_origin() -> None:
    assert _answer("http", "https://evil.example", "127.0.0.1:8501", method="GET") == {
        "type": "passed"
    }
