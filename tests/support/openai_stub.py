"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API.

Tests script it: ``stub.queue(...)`` replies are used first, in order, by
whatever requests arrive; then ``stub.responder(request)`` decides (default: a
fixed JSON answer). Every request is recorded with its text and the exact
bytes of its images, so a test can check what a model was shown.

    with OpenAIStub() as stub:
        stub.queue(Reply(status=429), Reply.answer("Pneumothorax", 3))
        client = ChatClient(stub.base_url)          # http://127.0.0.1:PORT/v1

Reply helpers: ``answer`` (bare JSON), ``fenced`` (JSON in a ```json fence),
``idk``, ``garbage``, ``slow`` (a delay before answering) and ``status``; a
reply's ``usage`` replaces the usage object and ``reasoning`` is sent as
``message.reasoning_content``.
Usable for LLM judges too: text-only requests work the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Reply:
    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None  # sent as is, instead of a chat-completions object
    body_bytes: bytes | None = None  # sent as is (e.g. gzip layers, with their headers)
    drip_s: float = 0.0  # > 0: send the body one byte at a time, this far apart
    model: str | None = None  # the model the reply claims (default: the one asked)
    usage: dict[str, Any] | None = None  # replaces the reply's usage object
    reasoning: str | None = None  # sent as message.reasoning_content

    @staticmethod
    def answer(diagnosis: str, likert: int | None = 3) -> Reply:
        return Reply(json.dumps({"diagnosis": diagnosis, "likert_score": likert}))

    @staticmethod
    def fenced(diagnosis: str, likert: int = 3) -> Reply:
        body = json.dumps({"diagnosis": diagnosis, "likert_score": likert}, indent=2)
        return Reply(f"Here is my answer:\n```json\n{body}\n```\n")

    @staticmethod
    def idk() -> Reply:
        return Reply("I don't know")

    @staticmethod
    def garbage() -> Reply:
        return Reply("The image shows some anatomy; further imaging could be considered.")

    @staticmethod
    def slow(delay_s: float, reply: Reply | None = None) -> Reply:
        base = reply or Reply.answer("Slow answer", 2)
        return Reply(base.content, base.status, delay_s, base.headers, base.raw_body)

    # hostile behaviours (issue 15)
    @staticmethod
    def drip(every_s: float = 0.2) -> Reply:
        """A valid answer sent one byte every ``every_s`` seconds: never a read timeout."""
        return Reply(Reply.answer("Dripped answer", 2).content, drip_s=every_s)

    @staticmethod
    def braces(n: int = 500) -> Reply:
        """Nested braces: main's parser took 15.7 s on n=500 and crashed on ``{{}}``."""
        return Reply("{" * n + "}" * n)

    @staticmethod
    def deep_json(depth: int = 50_000) -> Reply:
        return Reply('{"a":' * depth + "1" + "}" * depth)

    @staticmethod
    def huge_likert(digits: int = 5000) -> Reply:
        return Reply('{"diagnosis": "Pneumothorax", "likert": ' + "9" * digits + "}")

    @staticmethod
    def nul(diagnosis: str = "Pneumo\x00thorax") -> Reply:
        return Reply.answer(diagnosis, 3)

    @staticmethod
    def other_model(name: str = "someone-else", reply: Reply | None = None) -> Reply:
        base = reply or Reply.answer("Pneumothorax", 3)
        return Reply(base.content, model=name)

    @staticmethod
    def huge_body(n_bytes: int = 6 * 1024 * 1024) -> Reply:
        return Reply(raw_body="x" * n_bytes)

    @staticmethod
    def deep_body(depth: int = 50_000) -> Reply:
        """A 200 whose JSON body itself is 50,000 deep (not the content)."""
        return Reply(raw_body="[" * depth + "]" * depth)


@dataclass(frozen=True)
class ChatRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    def _parts(self) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for msg in self.body.get("messages", []):
            content = msg.get("content")
            if isinstance(content, str):
                parts.append({"type": "text", "text": content})
            elif isinstance(content, list):
                parts.extend(content)
        return parts

    @property
    def text(self) -> str:
        return "\n".join(p["text"] for p in self._parts() if p.get("type") == "text")

    @property
    def images(self) -> list[bytes]:
        out = []
        for p in self._parts():
            if p.get("type") == "image_url":
                url = p["image_url"]["url"]
                out.append(base64.b64decode(url.split(",", 1)[1]))
        return out

    @property
    def image_sha256(self) -> list[str]:
        return [hashlib.sha256(b).hexdigest() for b in self.images]


Responder = Callable[[ChatRequest], Reply]


class OpenAIStub:
    def __init__(self, port: int = 0) -> None:
        self.requests: list[ChatRequest] = []
        self.responder: Responder = lambda _req: Reply.answer("Default diagnosis", 3)
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def served(self) -> int:
        with self._lock:
            return len(self.requests)

    def _next(self, request: ChatRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        return self.responder(request)

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "no such route"}}), {})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": {"message": "bad json"}}), {})
                    return
                request = ChatRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                reply = stub._next(request)
                if reply.delay_s and stub._stop.wait(reply.delay_s):
                    return
                if reply.body_bytes is not None:
                    payload: str | bytes = reply.body_bytes
                elif reply.raw_body is not None:
                    payload = reply.raw_body
                elif reply.status != 200:
                    payload = json.dumps({"error": {"message": f"status {reply.status}"}})
                else:
                    model = reply.model if reply.model is not None else request.model
                    body = completion(model, reply.content)
                    if reply.usage is not None:
                        body["usage"] = reply.usage
                    if reply.reasoning is not None:
                        body["choices"][0]["message"]["reasoning_content"] = reply.reasoning
                    payload = json.dumps(body)
                self._send(reply.status, payload, reply.headers, reply.drip_s)

            def _send(
                self,
                status: int,
                payload: str | bytes,
                headers: dict[str, str],
                drip_s: float = 0.0,
            ) -> None:
                data = payload if isinstance(payload, bytes) else payload.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    if drip_s <= 0:
                        self.wfile.write(data)
                        return
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        if stub._stop.wait(drip_s):
                            return
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to do

        return Handler


def completion(model: str, content: str) -> dict[str, Any]:
    prompt_tokens, completion_tokens = 1000, max(1, len(content) // 4)
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A started stub server, stopped after the test."""
    with OpenAIStub() as stub:
        yield stub


def scripted_responder(script: dict[str, list[str]]) -> Responder:
    """Replies by the request's text: the first key of ``script`` found in it (a case's
    history) picks a list of replies, used in turn each time that case is asked (so
    repeat r of a run gets reply r); no key found: "I don't know"."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def responder(request: ChatRequest) -> Reply:
        key = next((k for k in script if k in request.text), None)
        if key is None:
            return Reply.idk()
        with lock:
            n = seen.get(key, 0)
            seen[key] = n + 1
        replies = script[key]
        return Reply(replies[n % len(replies)])

    return responder


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.support.openai_stub --port 8000 --script SCRIPT.json``: the stub
    served until interrupted (the docs' walks), replying by ``scripted_responder``."""
    import argparse
    import time
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--script", help="JSON: a piece of a case's text -> its replies in turn")
    args = parser.parse_args(argv)
    stub = OpenAIStub(port=args.port)
    if args.script:
        stub.responder = scripted_responder(json.loads(Path(args.script).read_text()))
    stub.start()
    print(f"stub serving on {stub.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
