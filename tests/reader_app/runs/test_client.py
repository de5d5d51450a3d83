"""The chat-completions client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import pytest

from reader_app.runs.client import (
    ChatClient,
    EndpointError,
    FatalEndpointError,
    chat_url,
    endpoint_host,
)
from tests.support.openai_stub import OpenAIStub, Reply

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def fast_client(stub: OpenAIStub, **kw: object) -> ChatClient:
    opts: dict[str, object] = {"timeout_s": 5.0, "max_retries": 3, "backoff_s": 0.01}
    opts.update(kw)
    return ChatClient(stub.base_url, **opts)  # type: ignore[arg-type]


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
        result = client.complete(BODY)
    assert '"Pneumothorax"' in result.text
    assert result.usage["prompt_tokens"] == 1000 and result.usage["total_tokens"] > 1000
    assert result.attempts == 1 and result.finish_reason == "stop" and result.latency_s >= 0
    assert openai_stub.requests[0].headers["authorization"] == "Bearer sk-test"


def test_no_key_sends_no_authorization(openai_stub: OpenAIStub) -> None:
    with fast_client(openai_stub) as client:
        client.complete(BODY)
    assert "authorization" not in openai_stub.requests[0].headers


def test_429_then_success_is_retried(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(
        Reply(status=429, headers={"Retry-After": "0"}), Reply(status=503), Reply.answer("X", 1)
    )
    with fast_client(openai_stub) as client:
        result = client.complete(BODY)
    assert result.attempts == 3 and openai_stub.served() == 3


def test_persistent_5xx_gives_up_after_max_retries(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda _r: Reply(status=500)
    with fast_client(openai_stub, max_retries=2) as client, pytest.raises(EndpointError) as err:
        client.complete(BODY)
    assert err.value.status == 500 and "3 attempts" in str(err.value)
    assert openai_stub.served() == 3


def test_timeout_is_retried_then_reported(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda _r: Reply.slow(2.0)
    client = fast_client(openai_stub, timeout_s=0.2, max_retries=1)
    with client, pytest.raises(EndpointError, match="timeout"):
        client.complete(BODY)
    assert openai_stub.served() == 2


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_routing_errors_are_fatal_and_not_retried(
    openai_stub: OpenAIStub, status: int
) -> None:
    openai_stub.responder = lambda _r: Reply(status=status)
    with fast_client(openai_stub) as client, pytest.raises(FatalEndpointError):
        client.complete(BODY)
    assert openai_stub.served() == 1


def test_other_4xx_fails_the_request_without_retry(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda _r: Reply(status=400)
    with fast_client(openai_stub) as client, pytest.raises(EndpointError) as err:
        client.complete(BODY)
    assert not isinstance(err.value, FatalEndpointError) and openai_stub.served() == 1
    assert "status 400" in err.value.body


def test_a_200_that_is_not_a_completion_is_an_error(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(Reply(raw_body="<html>proxy page</html>"))
    with fast_client(openai_stub) as client, pytest.raises(EndpointError) as err:
        client.complete(BODY)
    assert "proxy page" in err.value.body


def test_content_as_list_of_parts() -> None:
    from reader_app.runs.client import reply_text

    assert reply_text({"content": [{"type": "text", "text": "a"}, {"text": "b"}]}) == "ab"
    assert reply_text({"content": None}) == ""
    assert reply_text({"content": None, "refusal": "I can't help with that."}).startswith("I can")
