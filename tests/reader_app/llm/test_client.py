"""The chat-completions client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from stamina.instrumentation import get_on_retry_hooks, set_on_retry_hooks

from reader_app.llm import (
    FATAL_STATUSES,
    RETRY_STATUSES,
    ChatClient,
    ChatReply,
    EndpointError,
    FatalEndpointError,
    chat_url,
    endpoint_host,
    public_url,
    reply_text,
    retry_after_seconds,
)
from tests.support.openai_stub import OpenAIStub, Reply

MESSAGES = [{"role": "user", "content": "hello"}]


def fast_client(stub: OpenAIStub, **kw: object) -> ChatClient:
    opts: dict[str, object] = {"read_timeout_s": 5.0, "max_attempts": 4, "backoff_s": 0.01}
    opts.update(kw)
    return ChatClient(stub.base_url, **opts)  # type: ignore[arg-type]


def ask(client: ChatClient) -> ChatReply:
    return client.complete(MESSAGES, model="m")


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
        (
            "https://api.example.com/v1/chat/completions",
            "https://api.example.com/v1/chat/completions",
        ),
        ("https://h/openai/v1?api-version=1", "https://h/openai/v1/chat/completions?api-version=1"),
    ],
)
def test_chat_url_accepts_base_urls_and_full_urls(endpoint: str, url: str) -> None:
    assert chat_url(endpoint) == url


def test_chat_url_refuses_non_http() -> None:
    with pytest.raises(ValueError, match="http"):
        chat_url("127.0.0.1:8000")


def test_endpoint_host_drops_credentials_path_and_query() -> None:
    assert endpoint_host("https://user:s3cret@api.example.com/v1?key=abc") == "api.example.com"
    assert endpoint_host("http://127.0.0.1:8000/v1") == "127.0.0.1:8000"


def test_normal_reply_with_usage_and_bearer_key(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply.answer("Pneumothorax", 4))
    with fast_client(openai_stub, api_key="sk-test") as client:
        result = ask(client)
    assert '"Pneumothorax"' in result.text
    assert result.usage["prompt_tokens"] == 1000 and result.usage["total_tokens"] > 1000
    assert result.attempts == 1 and result.finish_reason == "stop" and result.latency_s >= 0
    assert openai_stub.requests[0].headers["authorization"] == "Bearer sk-test"


def test_complete_works_when_the_caller_is_inside_an_event_loop(openai_stub: OpenAIStub) -> None:
    """A notebook, or Playwright's sync API in the same process, has a loop running:
    the client then runs its request on a loop of its own thread, not asyncio.run here."""
    openai_stub.queue(Reply.answer("Pneumothorax", 4))

    async def inside_a_loop() -> str:
        with fast_client(openai_stub) as client:
            return ask(client).text

    # asyncio.run on a worker thread of our own: this test process may already have a loop
    # running on its main thread (Playwright), which is the very case under test
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert '"Pneumothorax"' in pool.submit(asyncio.run, inside_a_loop()).result()


def test_no_key_sends_no_authorization(openai_stub: OpenAIStub) -> None:
    with fast_client(openai_stub) as client:
        ask(client)
    assert "authorization" not in openai_stub.requests[0].headers


def test_429_then_success_is_retried(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(
        Reply(status=429, headers={"Retry-After": "0"}), Reply(status=503), Reply.answer("X", 1)
    )
    with fast_client(openai_stub) as client:
        result = ask(client)
    assert result.attempts == 3 and openai_stub.served() == 3


def test_persistent_5xx_gives_up_after_max_retries(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda _r: Reply(status=500)
    with fast_client(openai_stub, max_attempts=3) as client, pytest.raises(EndpointError) as err:
        ask(client)
    assert err.value.status == 500 and "3 attempts" in str(err.value)
    assert openai_stub.served() == 3


def test_timeout_is_retried_then_reported(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda _r: Reply.slow(2.0)
    client = fast_client(openai_stub, read_timeout_s=0.2, max_attempts=2)
    with client, pytest.raises(EndpointError, match="timed out"):
        ask(client)
    assert openai_stub.served() == 2


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_routing_errors_are_fatal_and_not_retried(
    openai_stub: OpenAIStub, status: int
) -> None:
    openai_stub.responder = lambda _r: Reply(status=status)
    with fast_client(openai_stub) as client, pytest.raises(FatalEndpointError):
        ask(client)
    assert openai_stub.served() == 1


def test_other_4xx_fails_the_request_without_retry(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda _r: Reply(status=400)
    with fast_client(openai_stub) as client, pytest.raises(EndpointError) as err:
        ask(client)
    assert not isinstance(err.value, FatalEndpointError) and openai_stub.served() == 1
    assert "status 400" in err.value.body


def test_a_200_that_is_not_a_completion_is_an_error(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply(raw_body="<html>proxy page</html>"))
    with fast_client(openai_stub) as client, pytest.raises(EndpointError) as err:
        ask(client)
    assert "proxy page" in err.value.body


def test_content_as_list_of_parts() -> None:
    assert reply_text({"content": [{"type": "text", "text": "a"}, {"text": "b"}]}) == "ab"
    assert reply_text({"content": None}) == ""
    assert reply_text({"content": None, "refusal": "I can't help with that."}).startswith("I can")


# --- issue 15: bounds, Retry-After, credentials -------------------------------------


@pytest.fixture
def waits() -> Iterator[list[float]]:
    """The waits stamina scheduled between attempts (its own instrumentation hook)."""
    seen: list[float] = []
    before = get_on_retry_hooks()
    set_on_retry_hooks([lambda details: seen.append(details.wait_for)])
    yield seen
    set_on_retry_hooks(before)


def test_slow_drip_is_cut_at_the_whole_request_deadline(openai_stub: OpenAIStub) -> None:
    # one byte every 0.2 s: each read arrives well inside the 5 s read timeout, so only
    # the whole-request deadline stops it (main kept a --timeout 5 request alive for 69 s)
    openai_stub.queue(Reply.drip(0.2))
    client = fast_client(openai_stub, read_timeout_s=5.0, deadline_s=1.5, max_attempts=1)
    started = time.monotonic()
    with client, pytest.raises(EndpointError, match=r"deadline of 1\.5 s"):
        ask(client)
    elapsed = time.monotonic() - started
    assert 1.4 <= elapsed < 3.0, elapsed


def test_a_drip_within_the_deadline_is_a_normal_reply(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply(Reply.answer("X", 1).content, drip_s=0.0005))
    with fast_client(openai_stub, deadline_s=30.0) as client:
        assert '"X"' in ask(client).text


def test_retry_after_seconds_and_http_date(openai_stub: OpenAIStub, waits: list[float]) -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    openai_stub.queue(
        Reply(status=429, headers={"Retry-After": "0.3"}),
        Reply(status=503, headers={"Retry-After": soon}),
        Reply.answer("X", 1),
    )
    with fast_client(openai_stub) as client:
        assert ask(client).attempts == 3
    assert waits[0] == pytest.approx(0.3)
    assert 0.5 < waits[1] <= 2.0  # an HTTP date ~2 s ahead (second resolution), not ignored


def test_retry_after_parser() -> None:
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("120", now=now) == 120.0
    assert retry_after_seconds("Tue, 01 Dec 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now=now) == 0.0  # past
    for junk in (None, "", "soon", "nan", "inf", "9" * 100):
        assert retry_after_seconds(junk, now=now) is None


def test_retry_after_is_capped(openai_stub: OpenAIStub, waits: list[float]) -> None:
    openai_stub.queue(Reply(status=429, headers={"Retry-After": "3600"}), Reply.answer("X", 1))
    with fast_client(openai_stub, backoff_max_s=0.2) as client:
        ask(client)
    assert waits == [pytest.approx(0.2)]


def test_reply_body_over_the_cap_is_an_error_read_no_further(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply.huge_body(3_000_000))
    client = fast_client(openai_stub, max_reply_bytes=1_000_000)
    with pytest.raises(EndpointError, match="over 1000000 bytes") as err:
        ask(client)
    assert len(err.value.body) <= 2000 and openai_stub.served() == 1


def test_a_50000_deep_body_is_an_error_not_a_recursion_error(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply.deep_body())
    with fast_client(openai_stub) as client, pytest.raises(EndpointError, match="not a chat"):
        ask(client)


def test_reply_names_the_model_that_answered(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply.other_model("gpt-impostor"))
    with fast_client(openai_stub) as client:
        assert ask(client).model == "gpt-impostor"


def test_credentials_in_the_url_are_sent_but_never_shown(
    openai_stub: OpenAIStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = openai_stub.base_url.replace("http://", "http://alice:pa55word@")
    openai_stub.queue(Reply(status=503), Reply(status=400))
    client = ChatClient(url, api_key="sk-secret", max_attempts=2, backoff_s=0.01)
    with pytest.raises(EndpointError) as err:
        ask(client)
    assert openai_stub.requests[0].headers["authorization"].startswith("Basic ")  # URL wins
    shown = " ".join([str(err.value), repr(client), client.url, client.host, caplog.text])
    assert "pa55word" not in shown and "alice" not in shown and "sk-secret" not in shown
    assert client.host == endpoint_host(openai_stub.base_url)


def test_one_retry_policy_and_one_v1_rule() -> None:
    assert {429, 500, 502, 503, 504} <= RETRY_STATUSES and not RETRY_STATUSES & FATAL_STATUSES
    assert chat_url("http://h:1") == "http://h:1/v1/chat/completions"
    assert public_url("http://u:p@h:1/v1?key=k") == "http://h:1/v1/chat/completions"


def test_basic_auth_from_the_url_reaches_the_server(openai_stub: OpenAIStub) -> None:
    url = openai_stub.base_url.replace("http://", "http://alice:pa55word@")
    ChatClient(url).complete(MESSAGES, model="m")
    # base64("alice:pa55word") == "YWxpY2U6cGE1NXdvcmQ="
    assert openai_stub.requests[0].headers["authorization"] == "Basic YWxpY2U6cGE1NXdvcmQ="
    assert "alice" not in openai_stub.requests[0].path
