"""Endpoint URLs of OpenAI-compatible servers: the chat URL, and what may be stored of it.

One ``/v1`` rule for every caller: a base URL (``http://host:8000/v1``) gets
``/chat/completions``; a bare host (``http://host:8000``) gets
``/v1/chat/completions``; a full chat URL is used as is. A ``user:password@``
in the URL is sent (HTTP basic auth) but never stored or logged: only
``endpoint_host`` and ``public_url`` leave this module.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def _split(endpoint: str) -> tuple[str, str, str, str]:
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"endpoint must be an http(s) URL, not {public_url_or_hint(endpoint)!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path or "/v1") + "/chat/completions"
    return parts.scheme, parts.netloc, path, parts.query


def chat_url(endpoint: str) -> str:
    """The chat-completions URL to POST to (credentials, if any, kept for the request)."""
    scheme, netloc, path, query = _split(endpoint)
    return urlunsplit((scheme, netloc, path, query, ""))


def endpoint_host(endpoint: str) -> str:
    """``host[:port]`` of the endpoint, with any user name or password removed."""
    parts = urlsplit(endpoint.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port else host


def public_url(endpoint: str) -> str:
    """The chat URL without user name, password or query: safe to store, log and hash."""
    scheme, _netloc, path, _query = _split(endpoint)
    return urlunsplit((scheme, endpoint_host(endpoint), path, "", ""))


def public_url_or_hint(endpoint: str) -> str:
    """For error messages about a malformed endpoint: never echo what looks like a password."""
    return endpoint.split("@", 1)[-1] if "@" in endpoint else endpoint
