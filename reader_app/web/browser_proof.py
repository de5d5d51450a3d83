"""Bind a Streamlit session to the browser that opened it: an HttpOnly cookie, checked by Streamlit.

Streamlit lets a websocket resume a session by its id alone (the id is in every
upload URL, so in proxy access logs), for ``server.disconnectedSessionTTL``
after the tab closes. It resumes only when the reconnecting connection's user
info equals the session's (``AppSession.matches_user_info``), and user info
includes the headers named in ``server.trustedUserHeaders``. So:

- every HTML page sent to a browser without our cookie sets one: 256 random
  bits, ``HttpOnly`` (no script reads it), ``SameSite=Lax``;
- on the websocket upgrade this middleware drops any client-sent
  ``X-Readerstudy-Browser`` header and puts the cookie's sha256 there;
- reader_app/web/asgi.py maps that header into Streamlit's user info, so a
  connection from another browser (or a bare client with the id and no
  cookie) gets a fresh, signed-out session instead of the reader's.

A plain ASGI middleware (no Streamlit import).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from http.cookies import SimpleCookie

from reader_app.web.security_headers import ASGIApp, Message, Receive, Scope, Send

COOKIE = "readerstudy_browser"
HEADER = "X-Readerstudy-Browser"
USER_KEY = "readerstudy_browser"  # its key in Streamlit's user info (st.user)
TRUSTED_USER_HEADERS: dict[str, str] = {HEADER: USER_KEY}
_VALID = re.compile(r"[A-Za-z0-9_-]{32,64}")


def browser_id(cookie_value: str) -> str:
    """What the session keeps: the cookie's hash, never the cookie."""
    return hashlib.sha256(cookie_value.encode("ascii")).hexdigest()


def header_value(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def cookie_of(scope: Scope) -> str | None:
    """This browser's proof cookie, if it sent a well-formed one."""
    raw = header_value(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header: no proof
        return None
    morsel = jar.get(COOKIE)
    if morsel is None or not _VALID.fullmatch(morsel.value):
        return None
    return morsel.value


def browser_of(scope: Scope) -> str | None:
    cookie = cookie_of(scope)
    return browser_id(cookie) if cookie else None


def _https(scope: Scope) -> bool:
    proto = header_value(scope, b"x-forwarded-proto") or ""
    return scope.get("scheme") in {"https", "wss"} or proto.split(",")[0].strip() == "https"


def _is_html(headers: list[tuple[bytes, bytes]]) -> bool:
    # only the page itself: its subresources then all carry the one cookie it set
    return any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)


class BrowserProof:
    """Set the proof cookie on HTTP responses; turn it into the trusted header on websockets."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            name = HEADER.lower().encode()
            headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != name]
            if (browser := browser_of(scope)) is not None:
                headers.append((name, browser.encode("ascii")))
            await self.app({**scope, "headers": headers}, receive, send)
            return
        if scope["type"] != "http" or cookie_of(scope) is not None:
            await self.app(scope, receive, send)
            return
        attributes = "; Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if _https(scope) else "")
        set_cookie = f"{COOKIE}={secrets.token_urlsafe(32)}{attributes}".encode("latin-1")

        async def send_with_cookie(message: Message) -> None:
            headers = message.get("headers", [])
            if message["type"] == "http.response.start" and _is_html(headers):
                message = {**message, "headers": [*headers, (b"set-cookie", set_cookie)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


__all__ = ["COOKIE", "HEADER", "TRUSTED_USER_HEADERS", "USER_KEY", "BrowserProof", "browser_id"]
