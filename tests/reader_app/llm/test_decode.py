"""The bounded reply decoder: every Content-Encoding layer under one cap on decoded bytes.

The attack of issue 32 item 2: an endpoint answers ``Content-Encoding: gzip, gzip``
with a small body that decodes to gigabytes. The client runs in a subprocess of
its own, against a real server on 127.0.0.1, and its peak RSS (``VmHWM``) is read.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zlib
from functools import cache

import pytest

from reader_app.llm import ChatClient, EndpointError
from reader_app.llm.decode import BoundedDecoder, DecodeRefused
from tests.support.openai_stub import OpenAIStub, Reply, completion

BOMB_GIB = 1


def gzip_bytes(data: bytes, level: int = 9) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


@cache
def gzip_gzip_bomb() -> bytes:
    """``gzip(gzip(1 GiB of zeros))``: about 13 KB on the wire."""
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    zeros = bytes(16 << 20)
    inner = b"".join(c.compress(zeros) for _ in range(64 * BOMB_GIB)) + c.flush()
    return gzip_bytes(inner)


def _decode(body: bytes, encoding: str | None, cap: int = 1 << 20, step: int = 7) -> bytes:
    decoder = BoundedDecoder(encoding, cap=cap)
    for i in range(0, len(body), step):
        decoder.feed(body[i : i + step])
    return decoder.finish()


def test_layers_decode_in_any_chunking() -> None:
    text = json.dumps(completion("m", "Pneumothorax " * 200)).encode()
    assert _decode(text, None) == text
    assert _decode(text, "identity") == text
    assert _decode(gzip_bytes(text), "gzip") == text
    assert _decode(gzip_bytes(gzip_bytes(text)), "gzip, gzip", step=1) == text
    assert _decode(zlib.compress(text), "deflate") == text
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert _decode(raw.compress(text) + raw.flush(), "Deflate") == text  # raw deflate too
    assert _decode(gzip_bytes(text[:100]) + gzip_bytes(text[100:]), "x-gzip") == text


@pytest.mark.parametrize(
    ("encoding", "message"),
    [
        ("br", "'br' is not decoded"),
        ("gzip, compress", "'compress' is not decoded"),
        ("gzip, gzip, gzip", "3 layers"),
    ],
)
def test_unknown_or_deep_encodings_are_refused(encoding: str, message: str) -> None:
    with pytest.raises(DecodeRefused, match=message):
        BoundedDecoder(encoding, cap=100)


def test_truncated_corrupt_and_trailing_bodies_are_refused() -> None:
    body = gzip_bytes(b"x" * 1000)
    with pytest.raises(DecodeRefused, match="truncated"):
        _decode(body[:-5], "gzip")
    with pytest.raises(DecodeRefused, match="corrupt"):
        _decode(body[:10] + b"\xff" * 40, "gzip")
    with pytest.raises(DecodeRefused, match="after its end"):
        _decode(zlib.compress(b"x" * 100) + b"junk", "deflate")


def test_every_layer_counts_against_the_cap() -> None:
    with pytest.raises(DecodeRefused, match="decoded reply body over 1000 bytes"):
        _decode(gzip_bytes(bytes(5000)), "gzip", cap=1000)
    with pytest.raises(DecodeRefused, match=r"^reply body over 10 bytes"):
        _decode(b"x" * 11, None, cap=10)
    # exactly the cap is fine
    assert _decode(gzip_bytes(bytes(1000)), "gzip", cap=1000) == bytes(1000)


def test_a_gzipped_reply_reaches_the_caller(openai_stub: OpenAIStub) -> None:
    body = json.dumps(completion("m", "Pneumothorax")).encode()
    openai_stub.queue(Reply(body_bytes=gzip_bytes(gzip_bytes(body)), headers=_GZ2))
    client = ChatClient(openai_stub.base_url, max_attempts=1)
    assert client.complete([{"role": "user", "content": "hi"}], model="m").text == "Pneumothorax"
    assert openai_stub.requests[0].headers["accept-encoding"] == "gzip, deflate"


_GZ2 = {"Content-Encoding": "gzip, gzip"}

_CHILD = textwrap.dedent(
    """
    import json, sys

    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith(("VmHWM", "VmRSS")):
                yield line.split()[0], int(line.split()[1])

    url, what = sys.argv[1], sys.argv[2]
    from reader_app.llm import ChatClient, EndpointError
    from reader_app.llm.judges import JudgeConfig
    from reader_app.grading.diagnosis_judge import JudgeClient
    before = dict(hwm())["VmRSS:"]
    if what == "client":
        try:
            ChatClient(url, max_attempts=1).complete([{"role": "user", "content": "x"}], model="m")
            error = None
        except EndpointError as exc:
            error = str(exc)
    else:  # the judges' path, as the Adjudication page and judge-reports call it
        judge = JudgeClient(JudgeConfig(url=url, model="m", max_attempts=1))
        error = judge.chat([{"role": "user", "content": "x"}]).error
    print(json.dumps({"before_kb": before, "peak_kb": dict(hwm())["VmHWM:"], "error": error}))
    """
)


@pytest.mark.parametrize("what", ["client", "judge"])
def test_stacked_gzip_bomb_is_cut_at_the_cap_in_bounded_memory(
    openai_stub: OpenAIStub, what: str
) -> None:
    bomb = gzip_gzip_bomb()
    assert len(bomb) < 64 * 1024  # a small body ...
    openai_stub.queue(Reply(body_bytes=bomb, headers=_GZ2))  # ... that decodes to 1 GiB
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, openai_stub.base_url, what],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    growth_mb = (result["peak_kb"] - result["before_kb"]) / 1024
    assert growth_mb < 300, result  # unbounded, it is over 1000 MB
    assert "decoded reply body over 4194304 bytes" in result["error"]
    assert openai_stub.served() == 1


def test_the_cap_error_keeps_the_start_of_the_body(openai_stub: OpenAIStub) -> None:
    openai_stub.queue(
        Reply(body_bytes=gzip_bytes(b"A" * 5000), headers={"Content-Encoding": "gzip"})
    )
    client = ChatClient(openai_stub.base_url, max_attempts=1, max_reply_bytes=1000)
    with pytest.raises(EndpointError, match="decoded reply body over 1000 bytes") as err:
        client.complete([{"role": "user", "content": "x"}], model="m")
    assert err.value.body.startswith("A" * 100)
