"""``readerstudy serve``: migrate, then serve the Streamlit app on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reader_app.commands.common import settings_or_exit
from reader_app.core.db import migrate
from reader_app.core.served_address import record_served, served_url
from reader_app.core.settings import DEFAULT_MAX_UPLOAD_MB
from reader_app.core.upload_limits import largest_upload_mb
from reader_app.study_setup.jobs import sweep

MAIN = Path(__file__).resolve().parent.parent / "web" / "asgi.py"  # st.App around main.py


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="serve the app on the configured database")
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.set_defaults(func=run)


# The app's own Streamlit settings, passed on the command line so they hold wherever
# the server is started from (Streamlit reads .streamlit/config.toml only from the
# current folder): no developer menu or Deploy button, no tracebacks or SQL in error
# boxes, XSRF protection on, no file watcher. CORS protection stays on (Streamlit's
# default): "off" protected nothing (any origin's websocket was accepted; our own
# origin check in reader_app/web/origin_check.py is the control) and made Streamlit
# print a 15-line warning after the demo's sign-in link.
APP_SETTINGS: dict[str, str] = {
    "server.headless": "true",
    "server.enableXsrfProtection": "true",
    "server.enableCORS": "true",
    "server.runOnSave": "false",
    "server.fileWatcherType": "none",
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "viewer",
    "client.showErrorDetails": "none",
    "runner.fastReruns": "true",
    # no full garbage collection after every script run: it held the GIL of the process
    # serving every reader after each page run (about 8% of the serving process's GIL
    # time with an analyst browsing, issue 43); Python's own generational collector runs
    "runner.postScriptGC": "false",
    # the dark reading room of .streamlit/config.toml (the exam page may go light by study)
    "theme.base": "dark",
    "theme.backgroundColor": "#0e1117",
    "theme.secondaryBackgroundColor": "#1c212b",
    "theme.textColor": "#e8eaed",
    "theme.primaryColor": "#1f5fbf",
}


def streamlit_argv(
    port: int, address: str, max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB
) -> list[str]:
    settings = [part for k, v in APP_SETTINGS.items() for part in (f"--{k}", v)]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(MAIN),
        "--server.port",
        str(port),
        "--server.address",
        address,
        *settings,
        # Streamlit's own cap: the largest page's limit (the New study page's ZIP, by
        # default); reader_app/web/upload_gate.py holds each page to its own limit
        *("--server.maxUploadSize", str(largest_upload_mb(max_upload_mb))),
    ]


def serve(port: int, address: str) -> int:
    settings = settings_or_exit()
    migrate(settings.database_url)
    sweep(settings)  # imports a killed server left running: interrupted, staging removed
    print(f"readerstudy: serving on http://{address}:{port}", flush=True)
    # the server process uses the very folder this command resolved (same cwd, but explicit)
    os.environ.setdefault("READERSTUDY_DATA_DIR", str(settings.data_dir))
    # links made by the server (staff pages) and by commands beside it point here,
    # unless a proxy's READERSTUDY_BASE_URL says otherwise (docs/deploy.md)
    url = served_url(address, port)
    record_served(settings.data_dir, url)
    os.environ.setdefault("READERSTUDY_BASE_URL", url)
    # glibc gives each thread that allocates its own arena (up to 8 per core), and
    # Streamlit runs every session's script in a thread: freed memory then sits in many
    # arenas. Two arenas keep the server's resident memory lower (docs/performance.md).
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    # glibc raises its mmap threshold after each large free, so the bootstrap's arrays
    # end up on the heap and their pages stay resident once freed; a fixed threshold
    # maps every block over 128 KiB on its own and gives it back on free (~30 MiB less
    # after an analyst's first session, scoring time unchanged; docs/performance.md).
    os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", "131072")
    # Arrow (Streamlit's dataframe transport) would keep its own mimalloc heap, which
    # holds on to what a page run freed (~14 MiB); the system allocator shares glibc's.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    argv = streamlit_argv(port, address, settings.max_upload_mb)
    os.execv(argv[0], argv)  # replaces this process: signals reach Streamlit directly
    return 0  # pragma: no cover


def run(args: argparse.Namespace) -> int:
    return serve(args.port, args.address)
