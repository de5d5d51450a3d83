"""The Streamlit websocket traffic of a browser page, kept for failure messages.

When a browser test waits in vain for the next screen, what the browser sent with
the submit (every widget value) and what the server answered say why far better
than a screenshot. Frames are kept raw, the last few hundred only, and decoded
only on failure; a large frame from the server (an image list, a component's
code) is kept as its size.
"""

from __future__ import annotations

import json
import time
from collections import deque

from playwright.sync_api import Page, WebSocket

KEEP_FRAMES = 300
KEEP_BYTES = 8_000  # larger server frames are recorded by size only


class WsTrace:
    def __init__(self) -> None:
        self.frames: deque[tuple[float, str, bytes | int]] = deque(maxlen=KEEP_FRAMES)
        self.t0 = time.monotonic()

    def attach(self, page: Page) -> WsTrace:
        page.on("websocket", self._on_websocket)
        return self

    def _on_websocket(self, ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: self._add("sent", payload))
        ws.on("framereceived", lambda payload: self._add("recv", payload))

    def _add(self, way: str, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            keep = payload if way == "sent" or len(payload) <= KEEP_BYTES else len(payload)
            self.frames.append((time.monotonic() - self.t0, way, keep))

    def describe(self, last: int = 40) -> str:
        """The last frames, one line each: BackMsgs in full, ForwardMsgs by kind."""
        from google.protobuf.json_format import MessageToDict
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        lines = []
        for at, way, raw in list(self.frames)[-last:]:
            if isinstance(raw, int):
                lines.append(f"{at:8.3f} {way} <{raw} bytes>")
                continue
            msg = BackMsg() if way == "sent" else ForwardMsg()
            try:
                msg.ParseFromString(raw)
            except Exception as exc:  # a frame we cannot decode still gets its line
                lines.append(f"{at:8.3f} {way} <undecodable: {exc}>")
                continue
            text = json.dumps(MessageToDict(msg))
            lines.append(f"{at:8.3f} {way} {text if way == 'sent' else text[:300]}")
        return "\n".join(lines)


def trace_of(page: Page) -> str:
    """The page's recorded traffic, or a note that it was not recorded."""
    trace = getattr(page, "_rs_trace", None)
    return trace.describe() if isinstance(trace, WsTrace) else "(no websocket trace)"
