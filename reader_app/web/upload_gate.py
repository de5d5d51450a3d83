"""Uploads only from signed-in staff, on a page that has an uploader, within that page's limit.

Streamlit's ``PUT /_stcore/upload_file/<session>/<file>`` accepts a file for any
live session whose id the caller knows (a stranger's own, read from the
websocket), with the page's own XSRF pair, up to ``server.maxUploadSize``,
and keeps it in memory until the session ends. In front of it:

- the session must be live and opened by this browser (the proof cookie of
  reader_app/web/browser_proof.py): someone who read a coordinator's session id
  in a log cannot replace or delete that coordinator's file;
- a ``PUT`` needs a signed-in user (401) whose role has an uploader on the
  page the session is on (403): readers have none;
- the body may not exceed that page's limit (413, checked from
  ``Content-Length`` and again while the body streams in, so nothing larger
  is read);
- a session keeps one uploaded file: an accepted ``PUT`` drops the session's
  earlier files (our uploaders take one file each), and a ``PUT`` while another of
  the same session is still streaming is refused (409; issue 39: four at once each
  kept their file), so one tab holds at most one page limit. With ``put_app``
  (reader_app/web/upload_spool.py) the accepted body is written to disk as it
  streams, not held in memory, and removed when the widget drops it or the
  session ends or expires.

A plain ASGI middleware (no Streamlit import): reader_app/web/asgi.py gives it the
pages with an uploader (reader_app/web/upload_pages.py) and the ``lookup`` into Streamlit's
session registry.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reader_app.web.browser_proof import browser_of, header_value
from reader_app.web.security_headers import ASGIApp, Message, Receive, Scope, Send
from reader_app.web.upload_spool import UPLOAD_IDS

log = logging.getLogger(__name__)

MB = 1024 * 1024
MULTIPART_OVERHEAD = 64 * 1024  # boundary lines and part headers around the file
_ROUTE = re.compile(r"(?:^|/)_stcore/upload_file/([^/]+)/([^/]+)/?$")


@dataclass(frozen=True)
class UploadSession:
    """What the gate needs to know of a live Streamlit session."""

    browser: str | None  # the browser proof it was opened with
    role: str | None  # the signed-in user's role; None: not signed in
    page: str | None  # url path of the page it is on


@dataclass(frozen=True)
class UploadPage:
    roles: tuple[str, ...]
    max_bytes: int


class _TooLarge(Exception):
    pass


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


class UploadGate:
    def __init__(
        self,
        app: ASGIApp,
        *,
        lookup: Callable[[str], UploadSession | None],
        pages: Mapping[str, UploadPage],
        keep_only: Callable[[str, str], None] | None = None,
        put_app: ASGIApp | None = None,
    ) -> None:
        self.app = app
        # answers an accepted PUT instead of Streamlit (reader_app/web/upload_spool.py: to disk)
        self.put_app = put_app
        self.lookup = lookup
        self.pages = dict(pages)
        self.keep_only = keep_only
        self._streaming: set[str] = set()  # sessions with a PUT in progress (one event loop)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        match = _ROUTE.search(scope.get("path", "")) if scope["type"] == "http" else None
        if match is None or method not in {"PUT", "DELETE"}:
            await self.app(scope, receive, send)
            return
        session_id, file_id = match.groups()
        session = self.lookup(session_id)
        browser = browser_of(scope)
        if session is None or session.browser is None or session.browser != browser:
            log.warning("upload refused: not a live session of this browser")
            await _refuse(send, 403, "This upload does not belong to a session of this browser.")
            return
        if method == "DELETE":
            await self.app(scope, receive, send)
            return
        if session.role is None:
            log.warning("upload refused: not signed in")
            await _refuse(send, 401, "Sign in first.")
            return
        page = self.pages.get(session.page or "")
        if page is None or session.role not in page.roles:
            log.warning("upload refused: the %s role has no uploader on this page", session.role)
            await _refuse(send, 403, "This page takes no upload.")
            return
        cap = page.max_bytes + MULTIPART_OVERHEAD
        declared = header_value(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > cap):
            await _refuse(send, 413, f"Larger than this page's limit of {page.max_bytes // MB} MB.")
            return
        if session_id in self._streaming:
            log.warning("upload refused: another upload of this session is in progress")
            await _refuse(send, 409, "Another upload of this page is still in progress.")
            return
        self._streaming.add(session_id)
        try:
            if self.keep_only is not None:
                self.keep_only(session_id, file_id)
            await self._within(
                cap, page.max_bytes, {**scope, UPLOAD_IDS: (session_id, file_id)}, receive, send
            )
        finally:
            self._streaming.discard(session_id)

    async def _within(
        self, cap: int, limit: int, scope: Scope, receive: Receive, send: Send
    ) -> None:
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await (self.put_app or self.app)(scope, counting_receive, tracking_send)
        except _TooLarge:
            log.warning("upload refused: the body grew past the page's limit while streaming")
            if not started:
                await _refuse(send, 413, f"Larger than this page's limit of {limit // MB} MB.")


__all__ = [
    "UploadGate",
    "UploadPage",
    "UploadSession",
]
