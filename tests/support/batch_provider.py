"""A local script playing a provider's batch service: batch-input JSONL in, batch output out.

    python -m tests.support.batch_provider INPUT.jsonl OUTPUT.jsonl ANSWERS.json

``ANSWERS.json`` maps the sha256 of a request's first image, or a piece of its
text (a case's history), to the reply text; a request no key matches gets an
error line, as a provider reports a failed request. Each output line has
OpenAI's shape: ``{"id", "custom_id", "response": {"status_code", "request_id",
"body"}, "error"}``, the body a chat completion with usage (1000 prompt and 50
completion tokens, a float cost of $0.001).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path


def first_image_sha(body: dict) -> str | None:  # type: ignore[type-arg]
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                return hashlib.sha256(data).hexdigest()
    return None


def main(argv: list[str]) -> int:
    source, target, answers_path = (Path(a) for a in argv)
    answers = json.loads(answers_path.read_text())
    out = []
    for n, line in enumerate(source.read_text().splitlines()):
        request = json.loads(line)
        assert request["method"] == "POST" and request["url"] == "/v1/chat/completions"
        body = request["body"]
        text = json.dumps(body["messages"], ensure_ascii=False)
        reply = answers.get(first_image_sha(body) or "") or next(
            (value for key, value in answers.items() if key in text), None
        )
        record: dict = {"id": f"batch_req_{n}", "custom_id": request["custom_id"]}  # type: ignore[type-arg]
        if reply is None:
            record["response"] = None
            record["error"] = {"code": "server_error", "message": "the provider failed"}
        else:
            record["response"] = {
                "status_code": 200,
                "request_id": f"req_{n}",
                "body": {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": 1000,
                        "completion_tokens": 50,
                        "total_tokens": 1050,
                        "cost": 0.001,
                    },
                },
            }
            record["error"] = None
        out.append(json.dumps(record))
    target.write_text("".join(f"{line}\n" for line in out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
