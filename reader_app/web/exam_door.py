"""The exam door: the case panel posts its answer, and its last draft, here.

``POST <base>/_readerstudy/exam/answer`` and ``.../draft``, a JSON body
``{"session": "<Streamlit session id>", "value": {...the panel's value...}}`` of
at most 256 KiB. The answer goes through ``reader_app.exam.commit`` with the exam
state of that session, exactly as the panel's Streamlit trigger would, and the
reply is the :class:`~reader_app.exam.commit.Outcome`: only once the answer is
committed does the panel show the case it holds next (it then asks Streamlit for
a page run, which draws the header and the case after that one). The draft is
what the panel sends as the page goes away (a ``keepalive`` request that outlives
it): a report over the websocket does not get out in time.

Who may post: the browser that opened the session (the proof cookie of
reader_app/web/browser_proof.py, which a cross-site request does not carry:
``SameSite=Lax``), signed in, on the exam. A cross-site page cannot send JSON
here without a CORS preflight we never answer, and reader_app/web/origin_check.py
refuses a foreign ``Origin`` before this runs. Every refusal is a short JSON
``{"error": ...}`` with its status; the body is read only up to its limit. Nothing
of the answer is logged.

What a client can hold here is bounded before and while the body is read (issue 39):

- before a byte of the body is read, the request must carry the browser proof of a
  live session that is signed in as a reader (403 / 401 otherwise). A stranger's
  request is answered at once, unread, and the server closes its connection;
- the whole body must arrive within ``BODY_DEADLINE_S`` (408 otherwise), and be at
  most ``MAX_BODY`` bytes (413);
- at most ``MAX_IN_FLIGHT`` requests per browser are being read or answered at once
  (429 for more; per browser, not per address, which a proxy shares), so even a
  signed-in reader's browser holds at most ``MAX_IN_FLIGHT`` x ``MAX_BODY`` bytes
  for ``BODY_DEADLINE_S``.

Connections that never send a whole request head are the HTTP server's (and the
reverse proxy's) to bound: docs/deploy.md.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from reader_app.core.db import get_engine
from reader_app.core.settings import Settings
from reader_app.exam.commit import commit_answer, keep_draft_said
from reader_app.exam.state import ExamState
from reader_app.ui.components.case_panel import door_url
from reader_app.ui.components.exam_session import EXAM_KEY
from reader_app.web.browser_proof import USER_KEY, browser_of
from reader_app.web.live_sessions import live_session, sessions_of_browser, state_value
from reader_app.web.streamlit_seams import user_info

MAX_BODY = 256 * 1024  # a report's two fields at their cap, the viewer record: far less
NO_STORE = {"Cache-Control": "no-store"}
BODY_DEADLINE_S = 10.0  # the panel's post is a few KB, sent at once: 10 s is generous
MAX_IN_FLIGHT = 8  # requests per browser being read or answered at once
NOT_OPEN = "This exam is not open in this browser: reload the page."
SIGN_IN = "Sign in with your invite link to answer."


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _reply(status: int, body: dict[str, Any], *, close: bool = False) -> JSONResponse:
    """``close``: a refusal answered before the body was read says ``Connection: close``,
    so the server drops the connection at once (an unread body would otherwise keep it
    open until the keep-alive timeout)."""
    headers = {**NO_STORE, "Connection": "close"} if close else NO_STORE
    return JSONResponse(body, status_code=status, headers=headers)


async def _body(request: Request) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(415, "The exam door takes JSON only.")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise Refused(413, "The answer is larger than any answer the exam sends.")
    raw = bytearray()
    try:
        async with asyncio.timeout(BODY_DEADLINE_S):
            async for chunk in request.stream():
                raw += chunk
                if len(raw) > MAX_BODY:
                    raise Refused(413, "The answer is larger than any answer the exam sends.")
    except ClientDisconnect as exc:
        raise Refused(400, "The request ended before its body did.") from exc
    except TimeoutError as exc:
        raise Refused(
            408, f"The answer did not arrive within {BODY_DEADLINE_S:.0f} s: send it again."
        ) from exc
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise Refused(400, "The request is not JSON as the exam sends it.") from exc
    if not isinstance(body, dict) or not isinstance(body.get("session"), str):
        raise Refused(400, "The request names no exam session.")
    return body


def _before_the_body(request: Request, *, or_just_closed: bool) -> str:
    """Refuse, without reading the body, a request no signed-in reader's session of this
    browser could have sent: no browser proof, no live session of it, or none signed in."""
    browser = browser_of(request.scope)
    if browser is None:
        raise Refused(403, NOT_OPEN)
    sessions = sessions_of_browser(browser, or_just_closed=or_just_closed)
    if not sessions:
        raise Refused(403, NOT_OPEN)
    if not any(getattr(state_value(s, "_signed_in"), "role", None) == "reader" for s in sessions):
        raise Refused(401, SIGN_IN)
    return browser


def _exam_of(request: Request, session_id: str, *, or_just_closed: bool) -> tuple[Any, ExamState]:
    """The signed-in user and exam state of the live session this browser opened."""
    session = live_session(session_id, or_just_closed=or_just_closed)
    browser = browser_of(request.scope)
    info = user_info(session)
    if session is None or browser is None or info.get(USER_KEY) != browser:
        raise Refused(403, NOT_OPEN)
    user = state_value(session, "_signed_in")  # reader_app.ui.context.SignedIn
    if user is None or getattr(user, "role", None) != "reader":
        raise Refused(401, SIGN_IN)
    state = state_value(session, EXAM_KEY)
    if not isinstance(state, ExamState):
        raise Refused(409, "The exam is not on screen: reload the page.")
    return user, state


def exam_routes(settings: Settings) -> list[BaseRoute]:
    """The door's two routes, on this server's database."""
    sessions: Callable[[], Session] = partial(
        Session, get_engine(settings.database_url), expire_on_commit=False
    )

    def answer(state: ExamState, value: object, user: Any) -> dict[str, Any]:
        outcome = commit_answer(
            state, value, reader_id=user.reader_id, token_hash=user.token_hash, sessions=sessions
        )
        return outcome.json()

    def draft(_: ExamState, value: object, user: Any) -> dict[str, Any]:
        said = keep_draft_said(
            value, reader_id=user.reader_id, token_hash=user.token_hash, sessions=sessions
        )
        return said.json()

    return [
        Route(f"{door_url()}/answer", _endpoint(answer), methods=["POST"]),
        # the draft sent as the page goes away may arrive after its websocket closed
        Route(f"{door_url()}/draft", _endpoint(draft, or_just_closed=True), methods=["POST"]),
    ]


def _endpoint(
    act: Callable[[ExamState, object, Any], dict[str, Any]],
    *,
    or_just_closed: bool = False,
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """A door route: the browser checked, then the body (by its deadline) and its session,
    then ``act`` (its database work) in a worker thread, its result the JSON reply."""
    in_flight: Counter[str] = Counter()  # per browser (one event loop: no lock)

    async def endpoint(request: Request) -> JSONResponse:
        try:
            browser = _before_the_body(request, or_just_closed=or_just_closed)
        except Refused as exc:
            return _reply(exc.status, {"error": str(exc)}, close=True)
        if in_flight[browser] >= MAX_IN_FLIGHT:
            return _reply(
                429, {"error": "Too many answers at once from this browser: wait."}, close=True
            )
        in_flight[browser] += 1
        try:
            body = await _body(request)
            user, state = _exam_of(request, body["session"], or_just_closed=or_just_closed)
            return _reply(200, await run_in_threadpool(act, state, body.get("value"), user))
        except Refused as exc:  # 408 and 413 leave a body unread: let the connection go
            return _reply(exc.status, {"error": str(exc)}, close=exc.status in (408, 413))
        finally:
            in_flight[browser] -= 1
            if not in_flight[browser]:
                del in_flight[browser]

    return endpoint
