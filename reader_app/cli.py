"""The ``readerstudy`` command: a thin dispatcher over reader_app.commands.*."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module registers one subcommand with add_parser(subparsers) and
# set_defaults(func=run); run(args) returns the exit code.
COMMAND_MODULES = (
    "demo",
    "serve",
    "import_study",
    "invite",
    "export",
    "grade",
    "score",
    "import_run",
    "run_model",
    "backup",
    "restore",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="readerstudy",
        description="Radiology reader studies: humans and AI models, same exam, same scoring.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"reader_app.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
