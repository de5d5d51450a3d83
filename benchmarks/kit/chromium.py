"""Which Chromium the browser tests, benchmarks and load tests launch, and with what flags.

Debian's ``/usr/bin/chromium`` (``READERSTUDY_CHROMIUM`` points elsewhere),
headless, with the flags that keep a run quiet and repeatable: no sandbox
(containers), no GPU, no QUIC, no background traffic or updates, and no
``/dev/shm`` (small in containers). tests/e2e/conftest.py, benchmarks/ and
scripts/loadtest_browser.py all take them from here.
"""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("READERSTUDY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
