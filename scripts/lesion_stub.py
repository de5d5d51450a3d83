"""A toy study with lesions in its pixels, and a toy model server to audit (docs/grounding.md).

    python scripts/lesion_stub.py make-study DIR     # 5 PNG cases, manifest.csv with regions
    python scripts/lesion_stub.py serve --port 8911  # answers from the lesion it sees
    python scripts/lesion_stub.py serve --port 8912 --from-history  # from the history only

The server speaks the OpenAI chat-completions API on 127.0.0.1. A lesion is a
block of one bright value on a dim background: 250 is a pneumothorax, 200 an
effusion; seeing none, the model says "I don't know". Nothing here is a real
model: it shows what the audit tells apart, a model that reads the scan and
one that reads the history.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

FINDINGS = {250: "Pneumothorax", 200: "Pleural effusion"}
HISTORIES = {250: "sudden dyspnoea after a fall", 200: "heart failure with orthopnoea"}
# case id, lesion value, lesion box (x, y, w, h); c5 has no reference region
CASES = [
    ("c1", 250, (10, 10, 8, 6), True),
    ("c2", 250, (40, 25, 8, 6), True),
    ("c3", 200, (20, 30, 10, 8), True),
    ("c4", 200, (30, 10, 8, 8), True),
    ("c5", 250, (5, 30, 8, 6), False),
]


def make_study(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["case_id,kind,files,diagnosis,history,modality,reviewed_by,reference_region"]
    for i, (case, value, (x, y, w, h), region) in enumerate(CASES):
        yy, xx = np.mgrid[0:48, 0:64]
        pixels = ((xx * 2 + yy * 3 + 11 * i) % 150).astype(np.uint8)
        pixels[y : y + h, x : x + w] = value
        Image.fromarray(pixels).save(folder / f"{case}.png")
        box = f'"{x},{y},{w},{h}"' if region else ""
        lines.append(
            f"{case},spot,{case}.png,{FINDINGS[value]},Case {i + 1}: {HISTORIES[value]},"
            f"CR,Dr Example,{box}"
        )
    (folder / "manifest.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p for m in body.get("messages", []) for p in (m.get("content") or []) if isinstance(p, dict)
    ]


def answer(body: dict[str, Any], from_history: bool) -> tuple[str, int]:
    if from_history:
        text = " ".join(p.get("text", "") for p in _parts(body) if p.get("type") == "text")
        for value, words in HISTORIES.items():
            if words in text:
                return FINDINGS[value], 3
        return "I don't know", 0
    for p in _parts(body):
        if p.get("type") != "image_url":
            continue
        data = base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
        pixels = np.asarray(Image.open(io.BytesIO(data)).convert("L"))
        for value, finding in FINDINGS.items():
            if int((pixels == value).sum()) >= 4:
                return finding, 4
    return "I don't know", 0  # no lesion in sight: it hands the case over


def serve(port: int, from_history: bool) -> None:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            diagnosis, likert = answer(body, from_history)
            content = json.dumps({"diagnosis": diagnosis, "likert_score": likert})
            reply = {
                "id": "stub",
                "object": "chat.completion",
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
            data = json.dumps(reply).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("make-study").add_argument("folder", type=Path)
    srv = sub.add_parser("serve")
    srv.add_argument("--port", type=int, default=8911)
    srv.add_argument("--from-history", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "make-study":
        make_study(args.folder)
    else:
        serve(args.port, args.from_history)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
