"""HTTP response headers that every page and file the app serves carries.

``Referrer-Policy: no-referrer``: a reader signs in with ``/?token=...``, and
until the app moves the token out of the address bar every request the page
makes (scripts, styles, images, the websocket's HTTP upgrade, links a reader
follows) would otherwise send that URL, token included, in ``Referer``. A
header on the HTML document governs every request that document starts, so
it is in force before the first script loads, unlike a ``<meta>`` tag that a
Streamlit script could only add after the page has loaded.

A plain ASGI middleware (no Streamlit import): ``reader_app/web/asgi.py`` puts it
in front of Streamlit's own app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = ((b"referrer-policy", b"no-referrer"),)


class SecurityHeaders:
    """Add SECURITY_HEADERS to every HTTP response (replacing any of the same name)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in SECURITY_HEADERS}
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": [*headers, *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


__all__ = ["SECURITY_HEADERS", "SecurityHeaders"]
