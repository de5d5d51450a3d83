"""``readerstudy restore FILE [--force]``: replace the database with a backup."""

from __future__ import annotations

import argparse
from pathlib import Path

from reader_app.commands.common import fail, settings_or_exit
from reader_app.core.backup import restore_database


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "restore",
        help="replace the database with a backup made by `readerstudy backup`",
        description="Replace the configured database with a backup, atomically, then migrate "
        "it to the current schema. Stop every app replica first. A database that already "
        "holds studies, readers or answers is only replaced with --force.",
    )
    p.add_argument("backup", help="a .sqlite3 or .pgdump file written by `readerstudy backup`")
    p.add_argument(
        "--force", action="store_true", help="replace a database that already holds data"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    source = Path(args.backup)
    if not source.is_file():
        return fail(f"no backup file at {source}")
    counts = restore_database(settings.database_url, source, force=args.force)
    summary = ", ".join(f"{n} {table}" for table, n in counts.items())
    print(f"Restored {source.name} into the configured database ({summary}).")
    return 0
