"""The one OpenAI-compatible chat-completions client, used by model runs and LLM judges.

Public API (kept small on purpose; later features such as a rubric judge or
multi-image requests build on it rather than beside it):

- ``ChatClient(endpoint, *, api_key, read_timeout_s, deadline_s, max_attempts,
  backoff_s, backoff_max_s, max_reply_bytes).complete(messages, *, model,
  params) -> ChatReply``
- ``ChatReply``: ``text``, ``model``, ``usage`` (token counts), ``cost``, ``reasoning``,
  ``latency_s``, ``attempts``,
  ``finish_reason``
- ``EndpointError`` (``status``, ``body``) and ``FatalEndpointError``
- ``chat_url``, ``endpoint_host``, ``public_url``, ``reply_text``,
  ``retry_after_seconds``, ``RETRY_STATUSES``, ``FATAL_STATUSES``
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reader_app.llm.client import (
        FATAL_STATUSES,
        MAX_REPLY_BYTES,
        RETRY_STATUSES,
        ChatClient,
        EndpointError,
        FatalEndpointError,
        retry_after_seconds,
    )
    from reader_app.llm.endpoint import chat_url, endpoint_host, public_url
    from reader_app.llm.reply import ChatReply, parse_completion, reply_text

# loaded on first use, so a module that needs only ``llm.judges`` or ``llm.prompts``
# (the study config, the analyst's pages) does not load httpx and stamina
_HOME = {
    "FATAL_STATUSES": "client",
    "MAX_REPLY_BYTES": "client",
    "RETRY_STATUSES": "client",
    "ChatClient": "client",
    "EndpointError": "client",
    "FatalEndpointError": "client",
    "retry_after_seconds": "client",
    "chat_url": "endpoint",
    "endpoint_host": "endpoint",
    "public_url": "endpoint",
    "ChatReply": "reply",
    "parse_completion": "reply",
    "reply_text": "reply",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'reader_app.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"reader_app.llm.{_HOME[name]}"), name)


__all__ = [
    "FATAL_STATUSES",
    "MAX_REPLY_BYTES",
    "RETRY_STATUSES",
    "ChatClient",
    "ChatReply",
    "EndpointError",
    "FatalEndpointError",
    "chat_url",
    "endpoint_host",
    "parse_completion",
    "public_url",
    "reply_text",
    "retry_after_seconds",
]
