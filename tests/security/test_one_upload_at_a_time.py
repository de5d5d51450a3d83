"""One upload per session at a time (issue 39): four simultaneous ``PUT``s to one
coordinator session each kept their file, because the one-file rule drops only
finished uploads. The real gate (core/upload_gate.py) in front of the real spool
(core/upload_spool.py, files on disk), four PUTs whose bodies arrive interleaved
on one event loop, as uvicorn would run them."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from reader_app.web.browser_proof import COOKIE, browser_id
from reader_app.web.upload_gate import UploadGate, UploadPage, UploadSession
from reader_app.web.upload_spool import SpoolPut, UploadSpool
from tests.support.asgi_call import run_call

PROOF = "p" * 43  # a well-formed proof cookie (32 to 64 URL-safe characters)
BOUNDARY = "b0undary"


def _body(data: bytes) -> bytes:
    return (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="key.csv"\r\n'
            "Content-Type: text/csv\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


def _gate(spool: UploadSpool) -> UploadGate:
    async def streamlit(_scope: Any, _receive: Any, _send: Any) -> None:
        raise AssertionError("an accepted PUT goes to the spool, never to Streamlit")

    session = UploadSession(browser=browser_id(PROOF), role="coordinator", page="setup")
    return UploadGate(
        streamlit,
        lookup=lambda sid: session if sid == "s1" else None,
        pages={"setup": UploadPage(roles=("coordinator",), max_bytes=1 << 20)},
        keep_only=spool.keep_only,
        put_app=SpoolPut(spool, lambda _scope: True),
    )


def _scope(file_id: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "PUT",
        "path": f"/_stcore/upload_file/s1/{file_id}",
        "headers": [
            (b"content-type", f"multipart/form-data; boundary={BOUNDARY}".encode()),
            (b"cookie", f"{COOKIE}={PROOF}".encode()),
        ],
    }


async def _put(gate: UploadGate, file_id: str, body: bytes, go: asyncio.Event) -> int:
    """One PUT whose first half arrives at once and its second half after ``go``."""
    halves = [body[: len(body) // 2], body[len(body) // 2 :]]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        part = halves.pop(0)
        if not halves:
            await go.wait()
        return {"type": "http.request", "body": part, "more_body": bool(halves)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await gate(_scope(file_id), receive, send)  # type: ignore[arg-type]
    return int(sent[0]["status"])


def test_simultaneous_puts_to_one_session_keep_one_file(tmp_path: Path) -> None:
    spool = UploadSpool(tmp_path)
    gate = _gate(spool)
    ids = [str(uuid.uuid4()) for _ in range(4)]
    statuses: list[int] = []

    async def four_at_once() -> None:
        go = asyncio.Event()
        tasks = [
            asyncio.create_task(_put(gate, fid, _body(b"x" * (1000 * (i + 1))), go))
            for i, fid in enumerate(ids)
        ]
        await asyncio.sleep(0.05)  # all four have started: the first is mid-body
        go.set()
        statuses.extend(await asyncio.gather(*tasks))

    run_call(four_at_once())
    # the first is written (204, the spool's answer); the three that came while it
    # streamed are refused, before a byte of theirs was kept
    assert statuses == [204, 409, 409, 409]
    assert [fid for fid in ids if spool.get("s1", fid)] == [ids[0]]
    assert spool.total_bytes() == 1000
    assert len(list(spool.folder.iterdir())) == 1

    # once it has finished, the next upload is taken, and replaces it (one file)
    async def one_more() -> None:
        go = asyncio.Event()
        go.set()
        statuses.append(await _put(gate, "next", _body(b"y" * 10), go))

    run_call(one_more())
    assert statuses[-1] == 204
    assert spool.get("s1", ids[0]) is None and spool.total_bytes() == 10
