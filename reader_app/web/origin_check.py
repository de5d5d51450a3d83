"""Refuse websockets and uploads that another web site's page starts (cross-site requests).

Streamlit accepts a websocket from any ``Origin`` when ``server.enableCORS`` is
off (``is_url_from_allowed_origins`` allows everything then), and its XSRF
check on the websocket only decides whether the OIDC cookie is read. A
browser always sends ``Origin`` on a websocket upgrade and on a ``PUT``: we
accept it only when it names this server (the ``Host`` the request came to)
or the public address (``READERSTUDY_BASE_URL``). A request without
``Origin`` is not a browser's cross-site request and passes (a bare client is
held by the session binding and the upload gate instead).

A plain ASGI middleware (no Streamlit import).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from urllib.parse import urlsplit

from reader_app.web.browser_proof import header_value
from reader_app.web.security_headers import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

CHECKED_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def origin_of(url: str) -> str:
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


class SameOrigin:
    """403 for a websocket upgrade or a state-changing request from a foreign origin."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(origin_of(a) for a in allowed if a)

    def permits(self, origin: str, host: str | None) -> bool:
        parts = urlsplit(origin)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            return False  # "null" (a sandboxed frame, a file) and the like
        if host and parts.netloc.lower() == host.lower():
            return True
        return origin_of(origin) in self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        checked = scope["type"] == "websocket" or (
            scope["type"] == "http" and scope.get("method") in CHECKED_METHODS
        )
        origin = header_value(scope, b"origin") if checked else None
        if origin is None or self.permits(origin, header_value(scope, b"host")):
            await self.app(scope, receive, send)
            return
        log.warning("refused a cross-site %s from another origin", scope["type"])
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        body = b"Requests from another web site are refused."
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"text/plain"),
                    (b"content-length", b"%d" % len(body)),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


__all__ = ["SameOrigin", "origin_of"]
