"""One bounded decoder for reply bodies: every ``Content-Encoding`` layer under one cap.

httpx decodes a layer in one call per received chunk, so a 2 KB body sent as
``Content-Encoding: gzip, gzip`` becomes gigabytes in memory before any size
check can run. Here the raw bytes (``Response.aiter_raw``) go through each
layer with ``zlib``'s ``max_length``, a slice at a time, and every layer's
output counts against the same cap: no layer ever holds more than the cap plus
one slice, whatever the body claims to decode to.

A gzip layer may hold any number of members (RFC 1952); each member's leftover
input is kept once, so memory stays bounded by the cap whatever the member
count, and an honest reply split into members decodes to its text.

Only ``identity``, ``gzip`` (``x-gzip``) and ``deflate`` are decoded, at most
``MAX_LAYERS`` of them; the client asks for just those (``ACCEPT_ENCODING``).
Anything else is refused with ``DecodeRefused``, naming it.
"""

from __future__ import annotations

import zlib

ACCEPT_ENCODING = "gzip, deflate"
MAX_LAYERS = 2
_SLICE = 64 * 1024  # output produced per decompress call


class DecodeRefused(ValueError):
    """The body is encoded in a way we do not decode, or decodes past the cap."""


class _Layer:
    """One gzip or deflate layer, producing at most ``_SLICE`` bytes per call.

    A gzip body may hold any number of members (RFC 1952 section 2.2): when one
    ends, what follows it starts the next, with zero bytes between members
    skipped as gzip(1) does. The input still to be read is held once, in
    ``_pending``: at a member's end zlib reports the same leftover both as
    ``unused_data`` and (after an output-limited call) as ``unconsumed_tail``,
    so only ``unused_data`` is taken (issue 39: adding both doubled the buffer
    per member).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._gzip = name in ("gzip", "x-gzip")
        self._z = self._new()
        self._pending = b""
        self._started = False  # deflate: no output yet, a raw stream may still be tried
        self._members = 0  # gzip members whose end was read

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> None:
        self._pending += data

    def _between_members(self) -> bool:
        """At a member's end: True to go on (a next member starts), False to wait for input."""
        if not self._gzip:
            raise DecodeRefused(f"{self.name} body has data after its end")
        self._pending = self._pending.lstrip(b"\0")  # zero padding between members
        if not self._pending:
            return False
        self._z = self._new()
        return True

    def pull(self) -> bytes:
        """The next slice of output (b"" when this layer needs more input)."""
        while self._pending:
            if self._z.eof and not self._between_members():
                return b""
            data, self._pending = self._pending, b""
            try:
                out = self._z.decompress(data, _SLICE)
            except zlib.error as exc:
                if not self._gzip and not self._started:  # some servers send raw deflate
                    self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._started = True
                    self._pending = data
                    continue
                raise DecodeRefused(f"{self.name} body is corrupt ({exc})") from None
            self._started = True
            if self._z.eof:
                self._members += 1
                self._pending = self._z.unused_data  # the leftover, once
            else:
                self._pending = self._z.unconsumed_tail
            if out:
                return out
        return b""

    def finish(self) -> None:
        if not self._z.eof and (self._started or self._members):
            raise DecodeRefused(f"{self.name} body is truncated")


class BoundedDecoder:
    """Raw body bytes in, decoded bytes out; ``DecodeRefused`` past ``cap`` decoded bytes.

    decoder = BoundedDecoder(resp.headers.get("content-encoding"), cap=4 * 1024 * 1024)
    for raw in chunks:
        decoder.feed(raw)
    body = decoder.finish()
    """

    def __init__(self, content_encoding: str | None, *, cap: int) -> None:
        names = [n.strip().lower() for n in (content_encoding or "").split(",")]
        names = [n for n in names if n and n != "identity"]
        unknown = [n for n in names if n not in ("gzip", "x-gzip", "deflate")]
        if unknown:
            raise DecodeRefused(f"reply Content-Encoding {unknown[0][:40]!r} is not decoded")
        if len(names) > MAX_LAYERS:
            raise DecodeRefused(
                f"reply Content-Encoding has {len(names)} layers (at most {MAX_LAYERS})"
            )
        # the last encoding listed was applied last: it is undone first
        self._layers = [_Layer(n) for n in reversed(names)]
        self._sizes = [0] * (len(self._layers) + 1)  # raw input, then each layer's output
        self.cap = cap
        self._out: list[bytes] = []
        self._overflow = b""

    def _count(self, stage: int, data: bytes) -> None:
        self._sizes[stage] += len(data)
        if self._sizes[stage] > self.cap:
            if stage == len(self._layers) and not self._out:
                self._overflow = data[:4096]
            what = "reply body" if stage == 0 else "decoded reply body"
            raise DecodeRefused(f"{what} over {self.cap} bytes")

    def _push(self, stage: int, data: bytes) -> None:
        """Give ``data`` (the output of stage ``stage``) to the next layer, slice by slice."""
        if stage == len(self._layers):
            self._out.append(data)
            return
        layer = self._layers[stage]
        layer.feed(data)
        while out := layer.pull():
            self._count(stage + 1, out)
            self._push(stage + 1, out)

    def feed(self, raw: bytes) -> None:
        self._count(0, raw)
        self._push(0, raw)

    def finish(self) -> bytes:
        for layer in self._layers:
            layer.finish()
        return b"".join(self._out)

    @property
    def head(self) -> bytes:
        """The start of what was decoded (for an error message)."""
        return b"".join(self._out[:4]) or self._overflow
