"""The one OpenAI-compatible chat-completions client, used by model runs and LLM judges.

Public API (kept small on purpose; later features such as a rubric judge or
multi-image requests build on it rather than beside it):

- ``ChatClient(endpoint, *, api_key, read_timeout_s, deadline_s, max_attempts,
  backoff_s, backoff_max_s, max_reply_bytes).complete(messages, *, model,
  params) -> ChatReply``
- ``ChatReply``: ``text``, ``model``, ``usage``, ``latency_s``, ``attempts``,
  ``finish_reason``
- ``EndpointError`` (``status``, ``body``) and ``FatalEndpointError``
- ``chat_url``, ``endpoint_host``, ``public_url``, ``reply_text``,
  ``retry_after_seconds``, ``RETRY_STATUSES``, ``FATAL_STATUSES``
"""

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
