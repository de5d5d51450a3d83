"""``readerstudy serve``: migrate, then serve the Streamlit app on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reader_app.commands.common import settings_or_exit
from reader_app.db import migrate

MAIN = Path(__file__).resolve().parent.parent / "main.py"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="serve the app on the configured database")
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.set_defaults(func=run)


def streamlit_argv(port: int, address: str) -> list[str]:
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
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]


def serve(port: int, address: str) -> int:
    settings = settings_or_exit()
    migrate(settings.database_url)
    print(f"readerstudy: serving on http://{address}:{port}", flush=True)
    argv = streamlit_argv(port, address)
    os.execv(argv[0], argv)  # replaces this process: signals reach Streamlit directly
    return 0  # pragma: no cover


def run(args: argparse.Namespace) -> int:
    return serve(args.port, args.address)
