"""``readerstudy backup [FILE]``: an online, consistent backup of the study database."""

from __future__ import annotations

import argparse
from pathlib import Path

from reader_app.commands.common import settings_or_exit
from reader_app.core.backup import backup_database, default_backup_path


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "backup",
        help="back up the database while the app runs (SQLite backup API / pg_dump)",
        description="Write a consistent backup of the configured database. SQLite uses its "
        "online backup API; PostgreSQL uses pg_dump (custom format), which must be installed. "
        "The asset folder is not included: copy it alongside (it is append-only).",
    )
    p.add_argument(
        "output",
        nargs="?",
        default=None,
        help="backup file to write (default: <data dir>/backups/readerstudy-<UTC time>.sqlite3 "
        "or .pgdump); never overwritten",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    dest = (
        Path(args.output)
        if args.output
        else default_backup_path(settings.data_dir, settings.database_url)
    )
    result = backup_database(settings.database_url, dest)  # a BackupError: cli.main reports it
    counts = ", ".join(f"{n} {table}" for table, n in result.counts.items())
    print(f"Backed up the {result.backend} database ({counts}).")
    print(f"{result.size} bytes, sha256 {result.sha256}. Backup file:")
    print(result.path.resolve())
    return 0
