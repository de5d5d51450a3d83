"""Run one ASGI call to completion from a synchronous test."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_call(call: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run`` in a thread of its own: Playwright's sync API may hold this
    worker's event loop (a browser test ran earlier in the same xdist worker)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, call).result()
