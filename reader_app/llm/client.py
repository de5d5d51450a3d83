"""``ChatClient``: the one chat-completions client, for model runs and LLM judges.

    client = ChatClient("http://host:8000/v1", api_key=key, read_timeout_s=60, deadline_s=120)
    reply = client.complete(messages, model="qwen2-vl", params={"temperature": 0})
    reply.text, reply.model, reply.usage, reply.attempts

Bounds on one request:

- ``read_timeout_s``: the longest silence between two reads (and the connect
  timeout);
- ``deadline_s``: the whole request, connect + send + read of the headers and
  the full body. A server that drips one byte every 0.2 s is cut here, which
  the per-read timeout alone never does;
- ``max_reply_bytes``: a body larger than this is an error, read no further. The
  cap holds for the *decoded* bytes of every ``Content-Encoding`` layer
  (``reader_app.llm.decode.BoundedDecoder``), so a tiny ``gzip, gzip`` body that
  claims gigabytes is cut at the cap, never inflated first.

Retries go through ``stamina`` (exponential backoff with jitter): timeouts,
dropped connections and ``RETRY_STATUSES`` are retried up to ``max_attempts``
attempts in all; ``Retry-After`` in seconds or as an HTTP date replaces the
computed wait (capped at ``backoff_max_s``). ``FATAL_STATUSES`` (bad key, path
or model) raise ``FatalEndpointError`` at once; any other status fails the one
request with ``EndpointError``. Error messages name only the host: the API key
is sent as a bearer token, a ``user:password@`` in the URL as basic auth, and
neither is stored or logged.

``complete`` is synchronous and thread-safe (each call runs its own event
loop), so worker threads may share one client.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import logging
import math
import ssl
import time
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
import stamina

from reader_app.core.errors import ReaderStudyError
from reader_app.llm.decode import ACCEPT_ENCODING, BoundedDecoder, DecodeRefused
from reader_app.llm.endpoint import endpoint_host, public_url
from reader_app.llm.reply import ChatReply, ReplyShapeError, parse_completion

log = logging.getLogger(__name__)

FATAL_STATUSES = frozenset({401, 403, 404})
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_ERROR_BODY = 2000
MAX_REPLY_BYTES = 4 * 1024 * 1024


class EndpointError(ReaderStudyError, RuntimeError):
    """A request that failed for good; ``body`` keeps (the start of) what the server said."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str = "",
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body[:MAX_ERROR_BODY]
        self.retry_after_s = retry_after_s


class RetryableError(EndpointError):
    """A transient failure: timeout, dropped connection, 429, 5xx."""


class FatalEndpointError(EndpointError):
    """Every request would fail the same way (bad key, path or model): stop."""


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once: loading the CA bundle costs ~20 ms
    of CPU, which every call would otherwise pay (each call has its own AsyncClient)."""
    return httpx.create_ssl_context()


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: ``"120"``, ``"1.5"`` or an HTTP date; None if unreadable."""
    if not value or len(value) > 64:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def chat_body(
    messages: Sequence[Mapping[str, Any]], *, model: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON body of one chat completion: what ``complete`` POSTs and what a batch
    file's line holds (runs/batch.py). ``params`` never override model and messages."""
    return {**(params or {}), "model": model, "messages": list(messages)}


class ChatClient:
    """One OpenAI-compatible endpoint; see the module docstring for the bounds."""

    def __init__(
        self,
        endpoint: str,
        *,
        api_key: str | None = None,
        read_timeout_s: float = 60.0,
        deadline_s: float = 120.0,
        max_attempts: int = 3,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if read_timeout_s <= 0 or deadline_s <= 0:
            raise ValueError("timeouts must be positive")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        # a user:password@ in the URL becomes basic auth; the URL we send (and that
        # httpx logs at INFO) carries no credentials
        parts = urlsplit(endpoint.strip())
        self._auth = (
            httpx.BasicAuth(unquote(parts.username), unquote(parts.password or ""))
            if parts.username
            else None
        )
        self.url = public_url(endpoint)
        self._url = urlunsplit(urlsplit(self.url)._replace(query=parts.query))
        self.host = endpoint_host(endpoint)
        self.read_timeout_s = read_timeout_s
        self.deadline_s = deadline_s
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.max_reply_bytes = max_reply_bytes
        self._headers = {"Accept-Encoding": ACCEPT_ENCODING}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    def __repr__(self) -> str:
        return f"ChatClient({self.url!r})"

    # kept for callers that use ``with``; there is nothing to release between calls
    def close(self) -> None:
        return None

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        model: str,
        params: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """POST one chat completion (retrying transient failures) and return the reply.

        ``params`` are further request fields (temperature, seed, max_tokens...).
        Raises FatalEndpointError or EndpointError.
        """
        return _run_to_completion(self._complete(chat_body(messages, model=model, params=params)))

    def _retry_hook(self, exc: Exception) -> bool | float:
        if not isinstance(exc, RetryableError):
            return False
        if exc.retry_after_s is not None:
            return min(exc.retry_after_s, self.backoff_max_s)
        return True

    async def _complete(self, body: dict[str, Any]) -> ChatReply:
        started = time.monotonic()
        attempts = 0
        timeout = httpx.Timeout(self.read_timeout_s, connect=min(self.read_timeout_s, 30.0))
        async with httpx.AsyncClient(
            timeout=timeout, headers=self._headers, auth=self._auth, verify=_ssl_context()
        ) as http:
            try:
                async for attempt in stamina.retry_context(
                    on=self._retry_hook,
                    attempts=self.max_attempts,
                    timeout=None,
                    wait_initial=self.backoff_s,
                    wait_max=self.backoff_max_s,
                    wait_jitter=self.backoff_s,
                ):
                    with attempt:
                        attempts += 1
                        return await self._attempt(http, body, attempts, started)
            except RetryableError as exc:
                elapsed = time.monotonic() - started
                raise EndpointError(
                    f"{exc} (gave up after {attempts} attempts, {elapsed:.1f} s)",
                    status=exc.status,
                    body=exc.body,
                ) from None
        raise AssertionError("unreachable: stamina either returns or raises")

    async def _attempt(
        self, http: httpx.AsyncClient, body: dict[str, Any], attempt: int, started: float
    ) -> ChatReply:
        t0 = time.monotonic()
        try:
            async with asyncio.timeout(self.deadline_s):
                async with http.stream("POST", self._url, json=body) as resp:
                    data = await self._read_capped(resp)
        except TimeoutError:
            raise RetryableError(
                f"timed out: deadline of {self.deadline_s:g} s passed "
                f"(connect + send + read) at {self.host}"
            ) from None
        except httpx.TimeoutException as exc:
            raise RetryableError(
                f"timed out: {type(exc).__name__} after {self.read_timeout_s:g} s at {self.host}"
            ) from None
        except httpx.TransportError as exc:
            raise RetryableError(
                f"connection failed: {type(exc).__name__} at {self.host}"
            ) from None
        status = resp.status_code
        if status == 200:
            try:
                return parse_completion(data, latency_s=time.monotonic() - t0, attempts=attempt)
            except ReplyShapeError as exc:
                raise EndpointError(
                    str(exc), status=200, body=data.decode("utf-8", "replace")
                ) from None
        text = data.decode("utf-8", "replace")
        message = f"HTTP {status} from {self.host}"
        if status in FATAL_STATUSES:
            raise FatalEndpointError(message, status=status, body=text)
        if status in RETRY_STATUSES or status >= 500:
            wait = retry_after_seconds(resp.headers.get("retry-after"))
            log.info("retryable %s (attempt %d, %.1f s in)", message, attempt, t0 - started)
            raise RetryableError(message, status=status, body=text, retry_after_s=wait)
        raise EndpointError(message, status=status, body=text)

    async def _read_capped(self, resp: httpx.Response) -> bytes:
        """The body, decoded layer by layer under ``max_reply_bytes`` decoded bytes."""
        decoder: BoundedDecoder | None = None
        try:
            decoder = BoundedDecoder(resp.headers.get("content-encoding"), cap=self.max_reply_bytes)
            async for raw in resp.aiter_raw():
                decoder.feed(raw)
            return decoder.finish()
        except DecodeRefused as exc:
            head = decoder.head[:MAX_ERROR_BODY] if decoder is not None else b""
            raise EndpointError(
                f"{exc} from {self.host}",
                status=resp.status_code,
                body=head.decode("utf-8", "replace"),
            ) from None


def _run_to_completion(coro: Coroutine[Any, Any, ChatReply]) -> ChatReply:
    """``asyncio.run`` for a caller that may already be inside an event loop (a notebook,
    Playwright's sync API in tests): then the coroutine runs on a loop of its own thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm") as pool:
        return pool.submit(asyncio.run, coro).result()
