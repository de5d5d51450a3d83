"""A small client for OpenAI-compatible chat-completions endpoints.

It speaks the one call every server in use offers (vLLM, SGLang, Ollama's
OpenAI API, hosted APIs): ``POST {base}/chat/completions``. Transient trouble
(429, 5xx, timeouts, dropped connections) is retried with exponential backoff
and jitter, honouring ``Retry-After``; a wrong key, path or model (401, 403,
404) stops the whole run, since no case could succeed; any other 4xx fails the
one case. The API key is sent as a bearer token and never stored.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

FATAL_STATUSES = frozenset({401, 403, 404})
MAX_ERROR_BODY = 2000


class EndpointError(RuntimeError):
    """A request that failed for good; ``body`` keeps what the server said."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str = "",
        retry_after: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body[:MAX_ERROR_BODY]
        self.retry_after = retry_after


class FatalEndpointError(EndpointError):
    """Every request would fail the same way (bad key, path or model): stop the run."""


@dataclass(frozen=True)
class ChatResult:
    """One successful completion: the reply text, token usage and timing."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None


def chat_url(endpoint: str) -> str:
    """The chat-completions URL for a base URL (``http://host:8000/v1``), a bare
    host (``http://host:8000`` -> ``/v1`` is added) or the full URL itself."""
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"endpoint must be an http(s) URL, not {endpoint!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path or "/v1") + "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def endpoint_host(endpoint: str) -> str:
    """``host[:port]`` of the endpoint, with any user name or password removed."""
    parts = urlsplit(endpoint.strip())
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


def reply_text(message: dict[str, Any]) -> str:
    """The text of a chat message whose content is a string or a list of parts
    (or, when there is none, the model's refusal message)."""
    content = message.get("content")
    text = ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    refusal = message.get("refusal")
    if not text.strip() and isinstance(refusal, str):
        return refusal  # kept as the raw reply; the parser makes it a failure
    return text


class ChatClient:
    """Thread-safe: one instance serves every worker of a run."""

    def __init__(
        self,
        endpoint: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        backoff_max_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = chat_url(endpoint)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout_s), headers=headers, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), self.backoff_max_s)
            except ValueError:
                pass  # an HTTP date: fall back to our own schedule
        base: float = min(self.backoff_max_s, self.backoff_s * 2.0**attempt)
        return base * (0.5 + random.random() / 2)

    def complete(self, body: dict[str, Any]) -> ChatResult:
        """POST one chat completion, retrying transient failures."""
        last: EndpointError | None = None
        started = time.monotonic()
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self._delay(attempt - 1, last.retry_after if last else None))
            t0 = time.monotonic()
            try:
                resp = self._http.post(self.url, json=body)
            except httpx.TimeoutException:
                last = EndpointError(f"timeout after {self._http.timeout.read} s")
                continue
            except httpx.TransportError as exc:
                last = EndpointError(f"connection error: {type(exc).__name__}: {exc}")
                continue
            if resp.status_code == 200:
                return self._result(resp, time.monotonic() - t0, attempt + 1)
            message = f"HTTP {resp.status_code} from {endpoint_host(self.url)}"
            if resp.status_code in FATAL_STATUSES:
                raise FatalEndpointError(message, status=resp.status_code, body=resp.text)
            if resp.status_code == 429 or resp.status_code >= 500:
                last = EndpointError(
                    message,
                    status=resp.status_code,
                    body=resp.text,
                    retry_after=resp.headers.get("retry-after"),
                )
                continue
            raise EndpointError(message, status=resp.status_code, body=resp.text)
        assert last is not None
        elapsed = time.monotonic() - started
        raise EndpointError(
            f"{last} (gave up after {self.max_retries + 1} attempts, {elapsed:.1f} s)",
            status=last.status,
            body=last.body,
        )

    @staticmethod
    def _result(resp: httpx.Response, latency_s: float, attempts: int) -> ChatResult:
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = reply_text(choice.get("message") or {})
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise EndpointError(
                f"not a chat-completions reply ({type(exc).__name__})", status=200, body=resp.text
            ) from exc
        usage = {
            k: int(v)
            for k, v in (data.get("usage") or {}).items()
            if isinstance(v, int) and not isinstance(v, bool)
        }
        return ChatResult(
            text=text,
            usage=usage,
            latency_s=round(latency_s, 4),
            attempts=attempts,
            finish_reason=choice.get("finish_reason"),
        )
