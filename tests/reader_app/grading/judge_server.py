"""A real OpenAI-compatible chat-completions server on 127.0.0.1, scripted per model name.

with JudgeServer() as server:
    server.script("judge-a", lambda req: Verdict.ok("correct"))
    JudgeConfig(url=server.base_url, model="judge-a")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Say:
    """One scripted reply."""

    content: str | None = None  # assistant text (None: send raw_body)
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def verdict(value: str, reason: str = "scripted") -> Say:
        return Say(json.dumps({"verdict": value, "reason": reason}))


Script = Callable[[dict[str, Any]], Say]


@dataclass
class Call:
    model: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def user_text(self) -> str:
        return str(self.body["messages"][-1]["content"])


class JudgeServer:
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                model = str(body.get("model", ""))
                with server._lock:
                    server.calls.append(Call(model, body, dict(self.headers.items())))
                if self.path != "/v1/chat/completions" or model not in server.scripts:
                    self._send(404, json.dumps({"error": "unknown model or path"}), {})
                    return
                say = server.scripts[model](body)
                if say.delay_s:
                    time.sleep(say.delay_s)
                if say.raw_body is not None:
                    payload = say.raw_body
                else:
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-test",
                            "object": "chat.completion",
                            "model": model,
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": say.content},
                                }
                            ],
                        }
                    )
                self._send(say.status, payload, say.headers)

            def _send(self, status: int, payload: str, headers: dict[str, str]) -> None:
                data = payload.encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def script(self, model: str, script: Script | Say) -> None:
        self.scripts[model] = script if callable(script) else (lambda _body, s=script: s)

    def calls_for(self, model: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.model == model]

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def sequence(*replies: Say) -> Script:
    """Replies in order, then the last one for ever."""
    queue = list(replies)
    lock = threading.Lock()

    def script(_body: dict[str, Any]) -> Say:
        with lock:
            return queue.pop(0) if len(queue) > 1 else queue[0]

    return script
