"""One reply-content normalizer for chat-completions bodies, shared by runs and judges."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_INT_DIGITS = 18
# a reasoning model's thoughts can be long; more than this is cut (and says so)
MAX_REASONING_CHARS = 200_000
# the token counts kept from ``usage`` and its details, under these names
USAGE_DETAILS = (
    ("completion_tokens_details", "reasoning_tokens", "reasoning_tokens"),
    ("prompt_tokens_details", "cached_tokens", "cached_tokens"),
)


class ReplyShapeError(ValueError):
    """A 200 whose body is not a chat completion."""


@dataclass(frozen=True)
class ChatReply:
    """One completion, or (for callers that never raise, the judges) why there is none.

    ``text`` is the assistant's text (string content, the text parts of list
    content, or the refusal when there is no text); ``model`` is the model the
    server says answered (``""`` when it does not say). ``error`` is set only on
    a failed call (``ChatReply.failed``), and then ``text`` is empty.

    ``usage`` holds the integer token counts (``prompt_tokens``,
    ``completion_tokens``, ``total_tokens``, and from the details
    ``reasoning_tokens`` and ``cached_tokens``); ``cost`` is the provider's
    ``usage.cost`` when it reports one; ``reasoning`` the model's reasoning text
    (``message.reasoning_content`` or ``reasoning``), for analysts only.
    """

    text: str
    model: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    reasoning: str | None = None
    latency_s: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None
    error: str | None = None

    @staticmethod
    def failed(error: str) -> ChatReply:
        return ChatReply(text="", error=error)

    @property
    def raw(self) -> str:
        """The reply text as stored with a judge call (its first 4,000 characters)."""
        return self.text[:4000]


def _bounded_int(digits: str) -> int | None:
    return int(digits) if len(digits.lstrip("-")) <= MAX_INT_DIGITS else None


def reply_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message whose content is a string or a list of parts
    (``{"type": "text", "text": ...}``, ``output_text`` parts, or bare strings);
    when there is no text, the model's refusal message (the parser makes it a failure)."""
    content = message.get("content")
    text = ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
        text = "".join(pieces)
    refusal = message.get("refusal")
    if not text.strip() and isinstance(refusal, str):
        return refusal
    return text


def usage_fields(raw_usage: object) -> tuple[dict[str, int], float | None]:
    """``usage`` -> (integer token counts, the provider's cost or None).

    Top-level integers are kept as they are; ``reasoning_tokens`` and
    ``cached_tokens`` come from their ``*_details`` objects; ``cost`` (a
    finite number >= 0, as OpenRouter reports it) is the provider's price of
    the call. Anything else (booleans, strings, huge numbers) is left out.
    """
    if not isinstance(raw_usage, Mapping):
        return {}, None
    usage = {
        str(k): int(v)
        for k, v in raw_usage.items()
        if isinstance(v, int) and not isinstance(v, bool)
    }
    for details, key, name in USAGE_DETAILS:
        value = raw_usage.get(details)
        count = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            usage[name] = count
    usage.pop("cost", None)  # a whole-number cost is a cost, never a token count
    cost = raw_usage.get("cost")
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < 1e9:
        return usage, None
    return usage, float(cost)


def reasoning_text(message: Mapping[str, Any]) -> str | None:
    """The model's reasoning (``reasoning_content``, else ``reasoning``), or None."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value.strip():
            return value[:MAX_REASONING_CHARS]
    return None


def parse_completion(data: bytes, *, latency_s: float, attempts: int) -> ChatReply:
    """A chat-completions body -> ChatReply; ReplyShapeError for anything else.

    Bounded: huge integers are not converted and deep nesting is an error,
    never a RecursionError.
    """
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"), parse_int=_bounded_int)
        choice = payload["choices"][0]
        message = choice.get("message")
        if not isinstance(message, Mapping):
            raise TypeError("no message")
        text = reply_text(message)
        reasoning = reasoning_text(message)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
        raise ReplyShapeError(f"not a chat-completions reply ({type(exc).__name__})") from exc
    usage, cost = usage_fields(payload.get("usage"))
    model = payload.get("model")
    finish = choice.get("finish_reason")
    return ChatReply(
        text=text,
        model=model[:200] if isinstance(model, str) else "",
        usage=usage,
        cost=cost,
        reasoning=reasoning,
        latency_s=round(latency_s, 4),
        attempts=attempts,
        finish_reason=finish[:64] if isinstance(finish, str) else None,
    )
